//! Decision providers: System One, OpenAI-compatible, mock, script, heuristic, fallback.

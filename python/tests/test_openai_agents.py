"""decision_contract.integrations.openai_agents: DecisionGuard with the real OpenAI Agents SDK
and a scripted model (the SDK's `Model` interface; no network, no key). Skipped, with the
reason, when the SDK is not installed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, List

import pytest

pytest.importorskip("agents", reason="the OpenAI Agents SDK is not installed: pip install './python[openai-agents]'")

from agents import Agent, ModelResponse, Runner, Usage, function_tool, set_tracing_disabled  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText  # noqa: E402

import decision_contract as dc  # noqa: E402
from conftest import REPO, run  # noqa: E402
from decision_contract.integrations.openai_agents import DecisionGuard  # noqa: E402

set_tracing_disabled(True)
RAN: List[str] = []


class Scripted(Model):
    """A model that answers each request with the next of its turns."""

    def __init__(self, *turns: List[Any]) -> None:
        self.turns = list(turns)

    async def get_response(self, *_args: Any, **_kwargs: Any) -> ModelResponse:
        return ModelResponse(output=self.turns.pop(0), usage=Usage(), response_id=None)

    def stream_response(self, *_args: Any, **_kwargs: Any) -> Any:
        raise NotImplementedError


def call(name: str, call_id: str, **args: Any) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(arguments=json.dumps(args), call_id=call_id, name=name, type="function_call", id=f"fc_{call_id}", status="completed")


def say(text: str) -> ResponseOutputMessage:
    content = [ResponseOutputText(text=text, type="output_text", annotations=[])]
    return ResponseOutputMessage(id="m", content=content, role="assistant", status="completed", type="message")


@function_tool
def read_file(path: str) -> str:
    """Reads a file."""
    RAN.append(f"read {path}")
    return f"contents of {path}"


@function_tool
def delete_file(path: str) -> str:
    """Deletes a file."""
    RAN.append(f"delete {path}")
    return f"deleted {path}"


def agent(guard: DecisionGuard, *turns: List[Any]) -> Agent[Any]:
    tools = [
        guard.tool(read_file, annotations={"readOnlyHint": True}),
        guard.tool(delete_file, annotations={"destructiveHint": True, "openWorldHint": False}),
    ]
    return Agent(name="assistant", instructions="", model=Scripted(*turns, [say("done")]), tools=tools)


def outputs(result: Any) -> List[str]:
    return [str(item.output) for item in result.new_items if item.type == "tool_call_output_item"]


def verified(decision: Path, log: Path, *options: str) -> None:
    status, out, err = run(decision, "replay", "--require-seal", *options, str(log))
    assert status == 0, out + err



@pytest.fixture(autouse=True)
def clean() -> None:
    RAN.clear()


def test_a_read_only_call_runs(decision: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    with DecisionGuard(log=log) as guard:
        result = Runner.run_sync(agent(guard, [call("read_file", "c1", path="a.txt")]), "go")
    assert result.interruptions == [] and RAN == ["read a.txt"] and result.final_output == "done"
    verified(decision, log)


def test_a_destructive_call_waits_and_an_approval_runs_it_once(decision: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    with DecisionGuard(log=log) as guard:
        app = agent(guard, [call("delete_file", "c2", path="a.txt")])
        first = Runner.run_sync(app, "go")
        (item,) = first.interruptions
        assert item.name == "delete_file" and RAN == []
        state = first.to_state()
        guard.approve(state, item)
        result = Runner.run_sync(app, state)
    assert RAN == ["delete a.txt"] and result.final_output == "done"
    verified(decision, log)


def test_a_rejection_leaves_the_call_unrun_and_says_why(decision: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    with DecisionGuard(log=log) as guard:
        app = agent(guard, [call("delete_file", "c2", path="a.txt")])
        first = Runner.run_sync(app, "go")
        state = first.to_state()
        guard.reject(state, first.interruptions[0], reason="keep it")
        result = Runner.run_sync(app, state)
    assert RAN == [] and any("keep it" in text for text in outputs(result))
    verified(decision, log)


def test_no_verdict_is_kept_once_its_call_ran_or_was_refused(decision: Path, tmp_path: Path) -> None:
    # A long-lived guard must not keep every call it decided: once a call ran, or a person
    # rejected it, its verdict is let go.
    log = tmp_path / "log.jsonl"
    with DecisionGuard(log=log) as guard:
        app = agent(guard, [call("read_file", "c1", path="a.txt"), call("delete_file", "c2", path="a.txt")], [call("delete_file", "c3", path="b.txt")])
        first = Runner.run_sync(app, "go")
        state = first.to_state()
        guard.approve(state, first.interruptions[0])
        second = Runner.run_sync(app, state)
        state = second.to_state()
        guard.reject(state, second.interruptions[0], reason="keep it")
        result = Runner.run_sync(app, state)
        assert RAN == ["read a.txt", "delete a.txt"] and result.final_output == "done"
        assert guard._verdicts == {}
    verified(decision, log)


def test_approvals_deny_refuses_through_the_input_guardrail(decision: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    with DecisionGuard(log=log, approvals="deny") as guard:
        result = Runner.run_sync(agent(guard, [call("delete_file", "c2", path="a.txt")]), "go")
    assert result.interruptions == [] and RAN == []
    assert any("approvals are off" in text for text in outputs(result))
    verified(decision, log)


def test_arguments_that_fail_the_schema_run_nothing(decision: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    with DecisionGuard(log=log) as guard:
        app = agent(guard, [call("delete_file", "c2", wrong=1)])
        first = Runner.run_sync(app, "go")
        # The SDK itself holds a call whose arguments it cannot read for approval; approving
        # it through the guard refuses it with the reason.
        state = first.to_state()
        assert guard.approve(state, first.interruptions[0]) is False
        result = Runner.run_sync(app, state)
    assert RAN == [] and any("schema" in text for text in outputs(result))
    # Refused before the contract was asked: the sealed log holds no decision to replay.
    assert '"decision"' not in log.read_text()
    verified(decision, log, "--allow-empty")


def test_an_approval_for_another_call_is_refused(tmp_path: Path) -> None:
    with DecisionGuard(log=tmp_path / "log.jsonl") as guard:
        app = agent(guard, [call("delete_file", "c2", path="a.txt")])
        first = Runner.run_sync(app, "go")
        item = first.interruptions[0]
        forged = type(item)(agent=item.agent, raw_item=call("delete_file", "c2", path="b.txt"))
        with pytest.raises(dc.UsageError, match="not the call that waits"):
            guard.approve(first.to_state(), forged)
    assert RAN == []


def test_the_example_runs_and_its_log_verifies(decision: Path, tmp_path: Path) -> None:
    log = tmp_path / "example.jsonl"
    done = subprocess.run([sys.executable, str(REPO / "examples/agents-openai/main.py"), "--log", str(log)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    verified(decision, log)


OUTCOME_CONTRACTS = json.dumps(
    {
        "contracts": [
            {
                "tool": "catalog",
                "method": "find_movies",
                "deliverable": {"type": "object", "required": ["movies"], "properties": {"movies": {"type": "array", "min_items": 1}}},
            }
        ]
    }
)


def catalog_agent(guard: DecisionGuard, movies: List[str], *turns: List[Any]) -> Agent[Any]:
    @function_tool
    def find_movies(title: str) -> str:
        """Finds movies by title."""
        RAN.append(f"find {title}")
        return json.dumps({"movies": movies})

    tool = guard.tool(find_movies, annotations={"readOnlyHint": True}, outcome=("catalog", "find_movies"))
    return Agent(name="assistant", instructions="", model=Scripted(*turns, [say("done")]), tools=[tool])


@pytest.mark.parametrize("movies, held", [(["Alien"], True), ([], False)])
def test_an_output_is_checked_against_its_outcome_contract(decision: Path, tmp_path: Path, movies: List[str], held: bool) -> None:
    log = tmp_path / "log.jsonl"
    contracts = dc.outcomes.Contracts.parse(OUTCOME_CONTRACTS)
    with DecisionGuard(log=log, outcomes=contracts) as guard:
        result = Runner.run_sync(catalog_agent(guard, movies, [call("find_movies", "c1", title="Alien")]), "go")
    assert RAN == ["find Alien"]
    (output,) = outputs(result)
    assert ("contract_violation" in output) is not held
    assert ("Alien" in output) is held
    (event,) = [json.loads(line)["e"] for line in log.read_text().splitlines() if '"tool:outcome"' in line]
    assert event["contract"] == ("held" if held else "violated") and event["call_id"] == "c1"
    verified(decision, log)


def test_an_outcome_contract_the_file_does_not_hold_is_refused(tmp_path: Path) -> None:
    contracts = dc.outcomes.Contracts.parse(OUTCOME_CONTRACTS)
    with DecisionGuard(log=tmp_path / "log.jsonl", outcomes=contracts) as guard:
        with pytest.raises(dc.UsageError):
            guard.tool(read_file, outcome=("catalog", "no_such_method"))
    with DecisionGuard(log=tmp_path / "other.jsonl") as without_outcomes:
        with pytest.raises(dc.UsageError, match="needs the guard's outcomes"):
            without_outcomes.tool(read_file, outcome=("catalog", "find_movies"))

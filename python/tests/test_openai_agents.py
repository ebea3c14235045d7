"""decision_contract.integrations.openai_agents: DecisionGuard with the real OpenAI Agents SDK
and a scripted model (the SDK's `Model` interface; no network, no key). Skipped, with the
reason, when the SDK is not installed."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, List

import pytest

pytest.importorskip("agents", reason="the OpenAI Agents SDK is not installed: pip install './python[openai-agents]'")

from agents import Agent, ModelResponse, RunConfig, Runner, RunState, Usage, function_tool, set_tracing_disabled, tool_namespace  # noqa: E402
from agents.run_config import ToolExecutionConfig  # noqa: E402
from agents.tool_context import ToolContext  # noqa: E402
from agents.exceptions import ToolInputGuardrailTripwireTriggered  # noqa: E402
from agents.tool_guardrails import ToolGuardrailFunctionOutput, ToolInputGuardrail, ToolInputGuardrailData  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText  # noqa: E402

import decision_contract as dc  # noqa: E402
from conftest import REPO, run  # noqa: E402
from decision_contract.integrations import openai_agents  # noqa: E402
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


def approved_and_resumed(guard: DecisionGuard, app: Agent[Any], first: Any) -> Any:
    """Approves the one call ``first`` stopped for, through the guard, and resumes the run."""
    (item,) = first.interruptions
    state = first.to_state()
    guard.approve(state, item)
    return Runner.run_sync(app, state)


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
        assert [item.name for item in first.interruptions] == ["delete_file"] and RAN == []
        result = approved_and_resumed(guard, app, first)
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


def decisions(log: Path) -> List[Any]:
    return [json.loads(line)["e"] for line in log.read_text().splitlines() if '"type":"decision"' in line]


def events(log: Path) -> List[Any]:
    return [line["e"] for line in map(json.loads, log.read_text().splitlines()) if line.get("kind") == "event"]


def event_types(log: Path) -> List[str]:
    return [event["type"] for event in events(log)]


def test_an_agent_used_as_a_tool_is_decided_once_across_its_interruption(decision: Path, tmp_path: Path) -> None:
    # The outer call runs an agent whose own call waits for a person. When the run resumes,
    # the SDK asks about the outer call again and continues it without its input guardrails:
    # the guard answers from the verdict it kept, rather than deciding the call a second time.
    log = tmp_path / "log.jsonl"
    with DecisionGuard(log=log) as guard:
        inner = Agent(
            name="inner",
            instructions="",
            model=Scripted([call("delete_file", "i1", path="a.txt")], [say("inner done")]),
            tools=[guard.tool(delete_file, annotations={"destructiveHint": True, "openWorldHint": False})],
        )
        helper = guard.tool(inner.as_tool(tool_name="helper", tool_description="Deletes what it is asked to."), annotations={"readOnlyHint": True})
        outer = Agent(name="outer", instructions="", model=Scripted([call("helper", "o1", input="a.txt")], [say("done")]), tools=[helper])
        first = Runner.run_sync(outer, "go")
        assert [item.call_id for item in first.interruptions] == ["i1"] and RAN == []
        result = approved_and_resumed(guard, outer, first)
        assert RAN == ["delete a.txt"] and result.final_output == "done"
        assert guard._verdicts == {}
    assert [(d["step"], d["state"]["tool"]) for d in decisions(log)] == [(0, "helper"), (1, "delete_file")]
    verified(decision, log)


@pytest.mark.parametrize("approved", [True, False])
def test_guardrails_asked_before_approval_record_nothing_until_a_person_answers(decision: Path, tmp_path: Path, approved: bool) -> None:
    # pre_approval_tool_input_guardrails: the SDK runs the input guardrail before it asks for
    # approval. The guard must not take that for an approval.
    log = tmp_path / "log.jsonl"
    config = RunConfig(tool_execution=ToolExecutionConfig(pre_approval_tool_input_guardrails=True))
    with DecisionGuard(log=log) as guard:
        app = agent(guard, [call("delete_file", "c2", path="a.txt")])
        first = Runner.run_sync(app, "go", run_config=config)
        (item,) = first.interruptions
        assert RAN == []
        assert '"approval:answer"' not in log.read_text() and '"tool:call"' not in log.read_text()
        state = first.to_state()
        if approved:
            guard.approve(state, item)
        else:
            guard.reject(state, item, reason="keep it")
        Runner.run_sync(app, state, run_config=config)
    assert RAN == (["delete a.txt"] if approved else [])
    answers = [json.loads(line)["e"] for line in log.read_text().splitlines() if '"approval:answer"' in line]
    assert [answer["approved"] for answer in answers] == [approved]
    verified(decision, log)


@pytest.mark.parametrize("before_approval, let_through", [(True, True), (False, False)])
def test_a_call_that_waits_is_let_through_unanswered_only_before_its_approval(tmp_path: Path, before_approval: bool, let_through: bool) -> None:
    # The guardrail asked about a call no person answered yet: allowed (recording nothing)
    # only in a run that asks guardrails before approvals; any other such ask is refused.
    with DecisionGuard(log=tmp_path / "log.jsonl") as guard:
        tool = guard.tool(delete_file, annotations={"destructiveHint": True})
        config = RunConfig(tool_execution=ToolExecutionConfig(pre_approval_tool_input_guardrails=before_approval))
        context = ToolContext(context=None, tool_name="delete_file", tool_call_id="c9", tool_arguments='{"path": "a.txt"}', run_config=config)
        guardrail = tool.tool_input_guardrails[0]
        output = guardrail.guardrail_function(ToolInputGuardrailData(context=context, agent=Agent(name="a")))
    assert (output.behavior["type"] == "allow") is let_through
    assert '"approval:answer"' not in (tmp_path / "log.jsonl").read_text()


@pytest.mark.parametrize("before_approval", [False, True])
@pytest.mark.parametrize("through_guard", [True, False])
def test_a_tool_in_a_namespace_runs_once_approved_and_is_recorded(decision: Path, tmp_path: Path, before_approval: bool, through_guard: bool) -> None:
    # The SDK keeps a namespaced tool's approval under its qualified name (fs.delete_file).
    log = tmp_path / "log.jsonl"
    config = RunConfig(tool_execution=ToolExecutionConfig(pre_approval_tool_input_guardrails=before_approval))
    with DecisionGuard(log=log) as guard:
        tools = tool_namespace(name="fs", description="Files.", tools=[guard.tool(delete_file, annotations={"destructiveHint": True})])
        namespaced = ResponseFunctionToolCall(arguments='{"path": "a.txt"}', call_id="c2", name="delete_file", namespace="fs", type="function_call", id="fc_c2", status="completed")
        app = Agent(name="assistant", instructions="", model=Scripted([namespaced], [say("done")]), tools=tools)
        first = Runner.run_sync(app, "go", run_config=config)
        (item,) = first.interruptions
        state = first.to_state()
        if through_guard:
            assert guard.approve(state, item) is True
        else:
            state.approve(item)
        Runner.run_sync(app, state, run_config=config)
    assert RAN == ["delete a.txt"]
    kinds = [json.loads(line)["e"].get("type") for line in log.read_text().splitlines() if '"e":' in line]
    assert kinds == ["decision", "approval:pending", "approval:answer", "approval:used", "tool:call"]
    verified(decision, log)


def test_a_call_a_guardrail_of_the_tools_own_refuses_is_not_recorded_as_running(decision: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Its output never comes, so its verdict is never let go of: the guard keeps a bounded
    # number of them.
    monkeypatch.setattr(openai_agents, "_KEPT_VERDICTS", 2)
    log = tmp_path / "log.jsonl"
    refuse = ToolInputGuardrail(guardrail_function=lambda _data: ToolGuardrailFunctionOutput.reject_content("not today"), name="own")
    own = dataclasses.replace(read_file, tool_input_guardrails=[refuse])
    with DecisionGuard(log=log) as guard:
        turns = [[call("read_file", f"c{n}", path=f"{n}.txt")] for n in range(3)]
        app = Agent(name="assistant", instructions="", model=Scripted(*turns, [say("done")]), tools=[guard.tool(own, annotations={"readOnlyHint": True})])
        result = Runner.run_sync(app, "go")
        assert sorted(guard._verdicts) == [("read_file", "c1"), ("read_file", "c2")]
    assert RAN == [] and outputs(result) == ["not today"] * 3
    assert '"tool:call"' not in log.read_text() and len(decisions(log)) == 3
    verified(decision, log)


def test_calls_with_the_same_id_in_an_agent_and_the_agent_using_it_are_each_decided_once(decision: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    with DecisionGuard(log=log) as guard:
        inner = Agent(
            name="inner",
            instructions="",
            model=Scripted([call("read_file", "x1", path="r.txt")], [call("delete_file", "x2", path="a.txt")], [say("inner done")]),
            tools=[guard.tool(read_file, annotations={"readOnlyHint": True}), guard.tool(delete_file, annotations={"destructiveHint": True})],
        )
        helper = guard.tool(inner.as_tool(tool_name="helper", tool_description="Reads, then deletes."), annotations={"readOnlyHint": True})
        outer = Agent(name="outer", instructions="", model=Scripted([call("helper", "x1", input="a.txt")], [say("done")]), tools=[helper])
        result = approved_and_resumed(guard, outer, Runner.run_sync(outer, "go"))
        assert result.final_output == "done" and guard._verdicts == {}
    assert RAN == ["read r.txt", "delete a.txt"]
    assert [(d["step"], d["state"]["tool"]) for d in decisions(log)] == [(0, "helper"), (1, "read_file"), (2, "delete_file")]
    verified(decision, log)


def test_an_approval_after_a_recorded_rejection_is_refused(decision: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    with DecisionGuard(log=log) as guard:
        app = agent(guard, [call("delete_file", "c2", path="a.txt")])
        first = Runner.run_sync(app, "go")
        (item,) = first.interruptions
        guard.reject(first.to_state(), item, reason="keep it")
        state = first.to_state()
        assert guard.approve(state, item) is False
        result = Runner.run_sync(app, state)
    assert RAN == [] and any("keep it" in text for text in outputs(result))
    verified(decision, log)


def test_a_rejection_after_a_recorded_approval_leaves_the_call_unrun(decision: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    with DecisionGuard(log=log) as guard:
        app = agent(guard, [call("delete_file", "c2", path="a.txt")])
        first = Runner.run_sync(app, "go")
        (item,) = first.interruptions
        assert guard.approve(first.to_state(), item) is True
        state = first.to_state()
        guard.reject(state, item, reason="changed my mind")
        result = Runner.run_sync(app, state)
    assert RAN == [] and any("changed my mind" in text for text in outputs(result))
    # The approval stays in the log, never used: no call ran on it.
    assert event_types(log).count("approval:answer") == 1 and "approval:used" not in event_types(log)
    verified(decision, log)


@pytest.mark.parametrize("how", ["reject_content", "raise_exception"])
def test_an_approved_call_a_guardrail_of_the_tools_own_refuses_leaves_its_approval_unused(decision: Path, tmp_path: Path, how: str) -> None:
    log = tmp_path / "log.jsonl"
    refuse = ToolInputGuardrail(guardrail_function=lambda _data: getattr(ToolGuardrailFunctionOutput, how)(*(["not today"] if how == "reject_content" else [])), name="own")
    own = dataclasses.replace(delete_file, tool_input_guardrails=[refuse])
    with DecisionGuard(log=log) as guard:
        app = Agent(name="assistant", instructions="", model=Scripted([call("delete_file", "c2", path="a.txt")], [say("done")]), tools=[guard.tool(own)])
        first = Runner.run_sync(app, "go")
        (item,) = first.interruptions
        state = first.to_state()
        assert guard.approve(state, item) is True
        try:
            Runner.run_sync(app, state)
        except ToolInputGuardrailTripwireTriggered:
            assert how == "raise_exception"
    assert RAN == []
    assert "approval:answer" in event_types(log) and "approval:used" not in event_types(log) and "tool:call" not in event_types(log)
    verified(decision, log)


@pytest.mark.parametrize("before_approval", [False, True])
@pytest.mark.parametrize("second_answer", ["approve", "reject"])
def test_a_call_id_that_comes_again_in_a_later_run_waits_for_an_approval_of_its_own(decision: Path, tmp_path: Path, before_approval: bool, second_answer: str) -> None:
    # A model provider with short ids: the second run asks for the very call the first did,
    # with the same id. The person's first approval does not answer it.
    log = tmp_path / "log.jsonl"
    config = RunConfig(tool_execution=ToolExecutionConfig(pre_approval_tool_input_guardrails=before_approval))
    with DecisionGuard(log=log) as guard:
        for run_number in range(2):
            app = agent(guard, [call("delete_file", "call_0", path="a.txt")])
            waiting = Runner.run_sync(app, "go", run_config=config)
            (item,) = waiting.interruptions
            # Nothing is recorded for the waiting call but its decision and its pending approval.
            assert event_types(log)[-2:] == ["decision", "approval:pending"]
            state = waiting.to_state()
            if run_number == 1 and second_answer == "reject":
                guard.reject(state, item, reason="not twice")
            else:
                assert guard.approve(state, item) is True
            Runner.run_sync(app, state, run_config=config)
    assert RAN == ["delete a.txt"] * (2 if second_answer == "approve" else 1)
    pending = [e["id"] for e in events(log) if e["type"] == "approval:pending"]
    answers = [(e["id"], e["approved"]) for e in events(log) if e["type"] == "approval:answer"]
    assert pending == [pending[0], f"{pending[0]}-2"]
    assert answers == [(pending[0], True), (pending[1], second_answer == "approve")]
    verified(decision, log)


def test_an_answer_after_a_restart_is_bound_to_the_same_call(decision: Path, tmp_path: Path) -> None:
    # What survives the process: the log (sealed) and the run's state, as JSON. The call that
    # waits is the run's second decision: the answer is bound to it, not to a decision anew.
    log = tmp_path / "log.jsonl"
    with DecisionGuard(log=log) as before:
        first = Runner.run_sync(agent(before, [call("read_file", "c1", path="r.txt"), call("delete_file", "c2", path="a.txt")]), "go")
        saved = json.dumps(first.to_state().to_json())
    assert RAN == ["read r.txt"]
    with DecisionGuard(log=log) as after:
        app = agent(after)
        state = asyncio.run(RunState.from_json(app, json.loads(saved)))
        (item,) = state.get_interruptions()
        after.approve(state, item)
        result = Runner.run_sync(app, state)
    assert RAN == ["read r.txt", "delete a.txt"] and result.final_output == "done"
    assert [d["step"] for d in decisions(log)] == [0, 1]
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

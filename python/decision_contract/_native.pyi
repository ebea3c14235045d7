"""Type stubs of the Rust extension module."""

from os import PathLike
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

JSON = Any
Document = Dict[str, Any]
StrPath = Union[str, "PathLike[str]"]

__version__: str

def engine() -> Document:
    """``{"version", "contract_schemas", "record_schema"}``."""

def check(
    text: Union[str, bytes],
    *,
    path: Optional[str] = None,
    profile: Optional[str] = None,
    capabilities: Union[str, Mapping[str, JSON], None] = None,
    deny_warnings: bool = False,
) -> Document:
    """One file's object of ``decision check --format json``."""

class Contract:
    @staticmethod
    def parse(text: Union[str, bytes], *, path: Optional[str] = None) -> "Contract": ...
    @property
    def blocks(self) -> List[str]: ...
    @property
    def schema(self) -> Optional[str]: ...
    @property
    def path(self) -> str: ...
    def explain(self) -> Document: ...
    def frame(
        self,
        block: str,
        state: Mapping[str, JSON],
        *,
        profile: Optional[str] = None,
        capabilities: Union[str, Mapping[str, JSON], None] = None,
        untrusted: Optional[Sequence[str]] = None,
        marking: str = "provenance",
    ) -> Document: ...
    def evaluate(
        self,
        block: str,
        answers: Mapping[str, JSON],
        *,
        gates: Union[Mapping[str, Union[float, str]], Sequence[str], None] = None,
        candidates: Optional[Mapping[str, Union[Mapping[str, str], Sequence[str]]]] = None,
    ) -> Document: ...
    def decide_and_record(
        self,
        block: str,
        state: Mapping[str, JSON],
        answers: Mapping[str, JSON],
        *,
        log: Union[StrPath, "SessionLog"],
        provider: str,
        step: int = 0,
        untrusted: Optional[Sequence[str]] = None,
    ) -> Document: ...
    def ask(
        self,
        block: str,
        state: Mapping[str, JSON],
        *,
        provider: str,
        url: Optional[str] = None,
        model: Optional[str] = None,
        log: Union[StrPath, "SessionLog", None] = None,
        gates: Union[Mapping[str, Union[float, str]], Sequence[str], None] = None,
        candidates: Optional[Mapping[str, Union[Mapping[str, str], Sequence[str]]]] = None,
        timeout_ms: int = 30000,
        openai_api: str = "chat",
        cells: str = "reference",
        capabilities: Union[str, Mapping[str, JSON], None] = None,
        untrusted: Optional[Sequence[str]] = None,
        step: int = 0,
    ) -> Document: ...

def check_provider(name: str) -> None: ...
def verify_log(path: StrPath, *, jobs: int = 0, verbose: bool = False, max_line: int = ...) -> Document: ...
def verify_record(record: Mapping[str, JSON]) -> Document: ...
def what_if(
    logs: Sequence[StrPath],
    contract: str,
    *,
    gates: Union[Sequence[str], Mapping[str, Union[float, str]]] = ...,
    label: str = "DECISION.md",
) -> Document: ...
def approvals(path: StrPath) -> List[Document]: ...
def approve(
    path: StrPath, id: str, *, deny: bool = False, reason: Optional[str] = None, input: Optional[str] = None
) -> str: ...

class SessionLog:
    def __init__(
        self,
        path: StrPath,
        *,
        session_id: Optional[str] = None,
        group_commit: bool = False,
        fsync: str = "never",
    ) -> None: ...
    def append_decision(self, record: Mapping[str, JSON]) -> None: ...
    def append_event(self, event_type: str, payload: Optional[Mapping[str, JSON]] = None) -> None: ...
    def set_run(self, run: int) -> None: ...
    def append_pending(
        self,
        id: str,
        tool: str,
        input: JSON,
        request_digest: str,
        extra: Optional[Mapping[str, JSON]] = None,
    ) -> Document: ...
    def approval(self, id: str) -> Optional[Document]: ...
    def answer_pending(self, id: str, approved: bool, reason: Optional[str] = None) -> Document: ...
    def use_pending(self, id: str, step: Optional[int] = None) -> None: ...
    def commit(self) -> None: ...
    def close(self) -> Optional[str]: ...
    @property
    def closed(self) -> bool: ...
    @property
    def head(self) -> Document: ...
    @property
    def path(self) -> Path: ...
    def __enter__(self) -> "SessionLog": ...
    def __exit__(self, *args: object) -> bool: ...

class Contracts:
    @staticmethod
    def load(path: StrPath) -> "Contracts": ...
    @staticmethod
    def parse(text: str, *, path: Optional[str] = None) -> "Contracts": ...
    def __len__(self) -> int: ...
    def validate(self, tool: str, method: str, outcome: Mapping[str, JSON]) -> Document: ...

def outcomes_check(path: StrPath) -> Document: ...
def outcomes_report(path: StrPath) -> Document: ...

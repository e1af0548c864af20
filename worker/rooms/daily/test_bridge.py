"""The bridge against the fake `daily` module (test/fakes/daily_module), over real pipes and framing."""

from __future__ import annotations

import ast
import inspect
import io
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pytest

FAKES = Path(__file__).resolve().parents[3] / "test" / "fakes" / "daily_module"
sys.path.insert(0, str(FAKES))

import daily  # noqa: E402

import bridge  # noqa: E402

assert Path(daily.__file__).is_relative_to(FAKES), "the tests must run against the fake SDK"


def frame(kind: bytes, payload: bytes) -> bytes:
    return bridge.HEADER.pack(kind, len(payload)) + payload


def command(**fields: Any) -> bytes:
    return frame(bridge.JSON_FRAME, json.dumps(fields).encode())


class Running:
    """bridge.run() on a thread, talking through two OS pipes like the worker's child process."""

    def __init__(self) -> None:
        in_r, self.in_w = os.pipe()
        self.out_r, out_w = os.pipe()
        self.to_bridge = os.fdopen(self.in_w, "wb", buffering=0)
        self.from_bridge: BinaryIO = os.fdopen(self.out_r, "rb")
        self.result: list[int] = []
        stdin, stdout = os.fdopen(in_r, "rb"), os.fdopen(out_w, "wb")
        self.thread = threading.Thread(target=lambda: self.result.append(bridge.run(stdin, stdout)))
        self.thread.start()

    def next(self) -> tuple[bytes, Any]:
        got = bridge.read_frame(self.from_bridge)
        assert got is not None, "the bridge closed its output"
        kind, payload = got
        return kind, json.loads(payload) if kind == bridge.JSON_FRAME else payload

    def event(self, name: str) -> dict[str, Any]:
        for _ in range(20):
            kind, body = self.next()
            if kind == bridge.JSON_FRAME and body["event"] == name:
                return dict(body)
        raise AssertionError(f"no {name} event")

    def send(self, data: bytes) -> None:
        self.to_bridge.write(data)


@pytest.fixture
def running() -> Iterator[Running]:
    daily.CallClient.instances.clear()
    r = Running()
    yield r
    r.to_bridge.close()
    r.thread.join(5)


def test_frames_round_trip_and_refuse_truncated_or_oversized_input() -> None:
    stream = io.BytesIO(frame(b"A", b"\x01\x02") + command(op="leave"))
    assert bridge.read_frame(stream) == (b"A", b"\x01\x02")
    assert bridge.read_frame(stream) == (b"J", b'{"op": "leave"}')
    assert bridge.read_frame(stream) is None
    with pytest.raises(ValueError, match="truncated frame header"):
        bridge.read_frame(io.BytesIO(b"J\x00"))
    with pytest.raises(ValueError, match="truncated frame payload"):
        bridge.read_frame(io.BytesIO(bridge.HEADER.pack(b"J", 10) + b"{}"))
    with pytest.raises(ValueError, match="exceeds"):
        bridge.read_frame(io.BytesIO(bridge.HEADER.pack(b"A", bridge.MAX_PAYLOAD + 1)))


def test_joins_with_the_custom_track_and_moves_audio_and_events(running: Running) -> None:
    assert running.event("ready") == {"event": "ready", "sampleRateIn": 24000, "sampleRateOut": 16000}
    running.send(command(op="join", url="https://x.daily.co/rm", token="tok"))
    joined = running.event("joined")
    client = daily.CallClient.instances[-1]
    assert joined["participantId"] == client.local_id
    name, args = client.calls[0]
    assert name == "join" and args["url"] == "https://x.daily.co/rm" and args["token"] == "tok"
    assert args["settings"]["inputs"]["microphone"]["settings"]["customTrack"]["id"] == running_track_id()
    assert args["settings"]["inputs"]["camera"] == {"isEnabled": False}

    # The respondent joins: the bridge renders their microphone at 16 kHz and says so.
    client.handler.on_participant_joined({"id": "p1", "info": {"userName": "Respondent"}})
    assert running.event("participant_joined") == {"event": "participant_joined", "id": "p1", "userName": "Respondent"}
    assert ("set_audio_renderer", ("p1", "microphone", 16000)) in client.calls
    client.deliver_audio("p1", b"\x10\x00" * 320)
    assert running.next() == (b"A", b"\x10\x00" * 320)

    # The bot's voice goes to the custom source; its control messages become app messages.
    running.send(frame(b"A", b"\x20\x00" * 480))
    running.send(command(op="app_message", message={"type": "state", "state": "speaking"}))
    client.handler.on_app_message({"type": "hangup"}, "p1")
    assert running.event("app_message") == {"event": "app_message", "sender": "p1", "message": {"type": "hangup"}}
    # Frames are handled in order: once the app message went out, the audio before it did too.
    wait_until(lambda: ("send_app_message", {"type": "state", "state": "speaking"}) in client.calls)
    assert bytes(client.sent_audio) == b"\x20\x00" * 480

    client.handler.on_participant_left({"id": "p1"}, "leftCall")
    assert running.event("participant_left") == {"event": "participant_left", "id": "p1", "reason": "leftCall"}
    running.send(command(op="leave"))
    assert running.event("closed") == {"event": "closed"}
    running.thread.join(5)
    assert running.result == [0] and client.released and ("leave", None) in client.calls


def test_flush_drops_the_queued_voice_and_sends_its_message_ahead(running: Running) -> None:
    running.event("ready")
    running.send(command(op="join", url="https://x.daily.co/rm", token="tok"))
    running.event("joined")
    client = daily.CallClient.instances[-1]
    second = b"\x20\x00" * 24_000  # one second of the bot's voice at 24 kHz, queued at once
    for i in range(0, len(second), 960):
        running.send(frame(b"A", second[i : i + 960]))
    running.send(command(op="app_message", message={"type": "audio_end", "utteranceId": "u1"}))
    wait_until(lambda: len(client.sent_audio) > 0)  # the voice is playing

    running.send(command(op="flush", message={"type": "interrupt"}))
    wait_until(lambda: ("send_app_message", {"type": "interrupt"}) in client.calls)
    # The message went out while the queued voice was still far from played (writing blocks for as
    # long as the audio plays: a second here), and the voice then stopped within a frame or two.
    played_at_interrupt = len(client.sent_audio)
    assert played_at_interrupt < len(second) // 2
    # What was queued behind the voice keeps its place and goes out now that the voice is gone.
    wait_until(lambda: ("send_app_message", {"type": "audio_end", "utteranceId": "u1"}) in client.calls, timeout=0.5)
    messages = [args for name, args in client.calls if name == "send_app_message"]
    assert messages == [{"type": "interrupt"}, {"type": "audio_end", "utteranceId": "u1"}]
    time.sleep(0.1)
    assert len(client.sent_audio) <= played_at_interrupt + 2 * 960

    # The bridge carries on: new voice plays, and leave waits for it.
    running.send(frame(b"A", b"\x30\x00" * 480))
    running.send(command(op="leave"))
    assert running.event("closed") == {"event": "closed"}
    assert bytes(client.sent_audio).endswith(b"\x30\x00" * 480)


def test_a_corrupt_stream_stops_the_voice_at_once(running: Running) -> None:
    running.event("ready")
    running.send(command(op="join", url="https://x.daily.co/rm", token="tok"))
    running.event("joined")
    client = daily.CallClient.instances[-1]
    for _ in range(50):
        running.send(frame(b"A", b"\x20\x00" * 480))  # a second queued
    started = time.monotonic()
    running.send(frame(b"J", b"not json"))
    running.event("closed")
    assert time.monotonic() - started < 0.5
    assert len(client.sent_audio) < 50 * 960 // 2


def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


def running_track_id() -> str:
    client = daily.CallClient.instances[-1]
    handler = client.handler
    assert isinstance(handler, bridge.Bridge)
    return handler.track.id


def test_a_participant_already_in_the_room_is_announced_and_rendered_once(running: Running) -> None:
    running.event("ready")
    client = daily.CallClient.instances[-1]
    client.remote["p0"] = {"id": "p0", "info": {"userName": "Respondent"}}
    running.send(command(op="join", url="https://x.daily.co/rm", token="tok"))
    running.event("joined")
    assert running.event("participant_joined")["id"] == "p0"
    client.handler.on_participant_joined(client.remote["p0"])  # the SDK may announce them as well
    client.handler.on_participant_joined({"id": "p1", "info": {"userName": "Other"}})
    assert running.event("participant_joined")["id"] == "p1"  # and not p0 a second time
    assert [c for c in client.calls if c[0] == "set_audio_renderer"] == [
        ("set_audio_renderer", ("p0", "microphone", 16000)),
        ("set_audio_renderer", ("p1", "microphone", 16000)),
    ]


def test_a_join_refused_by_the_room_is_reported(running: Running, monkeypatch: pytest.MonkeyPatch) -> None:
    running.event("ready")
    client = daily.CallClient.instances[-1]

    def refuse(*_args: Any, completion: Any = None, **_kw: Any) -> None:
        completion(None, "invalid meeting token")

    monkeypatch.setattr(client, "join", refuse)
    running.send(command(op="join", url="https://x.daily.co/rm", token="bad"))
    assert running.event("join_failed") == {"event": "join_failed", "message": "invalid meeting token"}


def test_a_malformed_frame_ends_the_bridge_with_a_clear_error(running: Running) -> None:
    running.event("ready")
    running.send(frame(b"J", b"not json"))
    assert running.event("error")["message"].startswith("bad frame from the worker:")
    assert running.event("closed") == {"event": "closed"}
    running.thread.join(5)
    assert running.result == [2]


def test_runs_as_a_process_and_exits_cleanly_when_the_worker_closes_its_input() -> None:
    env = {**os.environ, "PYTHONPATH": str(FAKES)}
    script = Path(bridge.__file__)
    done = subprocess.run([sys.executable, str(script)], input=b"", capture_output=True, env=env, timeout=30)
    assert done.returncode == 0, done.stderr
    out = io.BytesIO(done.stdout)
    events = []
    while (got := bridge.read_frame(out)) is not None:
        events.append(json.loads(got[1])["event"])
    assert events == ["ready", "call_state", "closed"]


def test_the_fake_sdk_has_the_real_sdks_names_and_parameters() -> None:
    """Each class and method of the fake exists in daily-python's own stubs with the same parameters
    (the fake may leave out trailing ones the bridge never passes); test hooks are listed here."""
    stubs = sorted(Path(sys.prefix).glob("lib/python3*/site-packages/daily/__init__.pyi"))
    assert stubs, f"daily-python is not installed in {sys.prefix}: run scripts/python-env.sh"
    real: dict[str, dict[str, list[str]]] = {}
    for node in ast.parse(stubs[0].read_text()).body:
        if isinstance(node, ast.ClassDef):
            real[node.name] = {
                f.name: [a.arg for a in f.args.args + f.args.kwonlyargs]
                for f in node.body
                if isinstance(f, ast.FunctionDef)
            }
    hooks = {"deliver_audio"}
    fake_classes = [c for c in vars(daily).values() if inspect.isclass(c) and c.__module__ == daily.__name__]
    assert {c.__name__ for c in fake_classes} <= set(real), "a fake class the SDK does not have"
    for cls in fake_classes:
        for name, member in vars(cls).items():
            # Objects the SDK makes itself (AudioData) have no public constructor to mirror.
            sdk_made = name == "__init__" and name not in real[cls.__name__]
            private = name.startswith("_") and name != "__init__" or sdk_made
            if private or name in hooks or not (callable(member) or isinstance(member, staticmethod)):
                continue
            assert name in real[cls.__name__], f"{cls.__name__}.{name} is not in daily-python"
            function = member.__func__ if isinstance(member, staticmethod) else member
            params = list(inspect.signature(function).parameters)
            expected = real[cls.__name__][name]
            assert params == expected[: len(params)], f"{cls.__name__}.{name}{params} differs from {expected}"

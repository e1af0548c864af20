"""The Daily bridge: joins one Daily room as the bot and moves audio and events over stdio.

All interview logic lives in the TypeScript worker (worker/rooms/daily/bot-room.ts); this process
only carries frames between it and Daily's Python client SDK. Framing and messages are documented
in docs/daily-bridge-protocol.md: each frame is one kind byte (b"J" JSON, b"A" audio), a 4-byte
big-endian payload length, then the payload.
"""

from __future__ import annotations

import json
import struct
import sys
import threading
from collections import deque
from collections.abc import Mapping
from typing import Any, BinaryIO

import daily

HEADER = struct.Struct(">cI")
JSON_FRAME = b"J"
AUDIO_FRAME = b"A"
MAX_PAYLOAD = 1 << 20
BOT_SAMPLE_RATE = 24_000  # what the bot's text-to-speech produces (PCM16 mono)
RESPONDENT_SAMPLE_RATE = 16_000  # what the bot's listener expects (PCM16 mono)
TRACK_INTERVAL_MS = 20


def read_frame(stream: BinaryIO) -> tuple[bytes, bytes] | None:
    """One frame from the stream, or None at a clean end of stream."""
    header = stream.read(HEADER.size)
    if not header:
        return None
    if len(header) < HEADER.size:
        raise ValueError("truncated frame header")
    kind, length = HEADER.unpack(header)
    if length > MAX_PAYLOAD:
        raise ValueError(f"frame of {length} bytes exceeds {MAX_PAYLOAD}")
    payload = stream.read(length)
    if len(payload) < length:
        raise ValueError("truncated frame payload")
    return kind, payload


class Output:
    """Frames to the worker; Daily calls back on its own threads, so writes are serialized."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.lock = threading.Lock()

    def frame(self, kind: bytes, payload: bytes) -> None:
        with self.lock:
            self.stream.write(HEADER.pack(kind, len(payload)) + payload)
            self.stream.flush()

    def event(self, name: str, **fields: Any) -> None:
        self.frame(JSON_FRAME, json.dumps({"event": name, **fields}).encode())


class Playout:
    """The bot's voice and what must follow it, played by one thread in the order the worker sent it.

    Writing audio blocks for as long as it plays (the SDK paces its custom source), so it happens
    here and not on the thread that reads the worker's frames: that thread stays free to act on
    `flush` at once, which drops the voice still queued here (up to the worker's lead) instead of
    letting it play out after the respondent started talking.
    """

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge
        self.items: deque[tuple[str, Any]] = deque()
        self.ready = threading.Condition()
        self.thread = threading.Thread(target=self.run, name="playout", daemon=True)
        self.thread.start()

    def put(self, kind: str, value: Any = None) -> None:
        with self.ready:
            self.items.append((kind, value))
            self.ready.notify()

    def drop_audio(self) -> None:
        """Drops the queued voice; messages keep their place."""
        with self.ready:
            self.items = deque(item for item in self.items if item[0] != "audio")

    def finish(self, play_queued: bool) -> None:
        """Stops the thread once what is queued has played, or at once; returns when it has."""
        with self.ready:
            if not play_queued:
                self.items.clear()
        self.put("stop")
        self.thread.join()

    def run(self) -> None:
        while True:
            with self.ready:
                while not self.items:
                    self.ready.wait()
                kind, value = self.items.popleft()
            if kind == "stop":
                return
            try:
                if kind == "audio":
                    self.bridge.source.write_frames(value)  # blocks while it plays
                else:
                    self.bridge.client.send_app_message(value)
            except Exception as err:  # the SDK's fault is reported; what follows still plays
                self.bridge.out.event("error", message=f"{kind} not sent: {err}")


class Bridge(daily.EventHandler):
    def __init__(self, out: Output) -> None:
        super().__init__()
        self.out = out
        self.client = daily.CallClient(event_handler=self)
        self.source = daily.CustomAudioSource(BOT_SAMPLE_RATE, 1)
        self.track = daily.CustomAudioTrack(self.source)
        self.rendering: set[str] = set()
        self.rendering_lock = threading.Lock()  # the join completion and SDK events race on it
        self.playout = Playout(self)

    # Worker -> Daily
    def join(self, url: str, token: str) -> None:
        settings = {
            "inputs": {
                "camera": {"isEnabled": False},
                "microphone": {"isEnabled": True, "settings": {"customTrack": {"id": self.track.id}}},
            },
            "publishing": {"camera": {"isPublishing": False}, "microphone": {"isPublishing": True}},
        }
        self.client.join(url, token, client_settings=settings, completion=self.on_joined)

    def on_joined(self, data: Mapping[str, Any] | None, error: str | None) -> None:
        if error:
            self.out.event("join_failed", message=str(error))
            return
        local_id = str(((data or {}).get("participants") or {}).get("local", {}).get("id", ""))
        self.out.event("joined", participantId=local_id)
        # Whoever was already in the room counts as joining now.
        for key, participant in self.client.participants().items():
            if key != "local":
                self.on_participant_joined(participant)

    def handle(self, kind: bytes, payload: bytes) -> bool:
        """Acts on one frame from the worker; False when the bridge should stop."""
        if kind == AUDIO_FRAME:
            self.playout.put("audio", payload)
            return True
        if kind != JSON_FRAME:
            self.out.event("error", message=f"unknown frame kind {kind!r}")
            return True
        command = json.loads(payload)
        op = command.get("op")
        if op == "join":
            self.join(str(command["url"]), str(command["token"]))
        elif op == "app_message":
            self.playout.put("app_message", command["message"])
        elif op == "flush":
            self.playout.drop_audio()
            if "message" in command:  # ahead of everything queued: it says why the voice stopped
                self.client.send_app_message(command["message"])
        elif op == "leave":
            return False
        else:
            self.out.event("error", message=f"unknown op {op!r}")
        return True

    def leave(self, play_queued: bool) -> None:
        self.playout.finish(play_queued)
        done = threading.Event()
        self.client.leave(completion=lambda _error: done.set())
        done.wait(5)
        self.client.release()

    # Daily -> worker
    def on_participant_joined(self, participant: Mapping[str, Any]) -> None:
        pid = str(participant.get("id", ""))
        if not pid or participant.get("info", {}).get("isLocal"):
            return
        with self.rendering_lock:
            if pid in self.rendering:
                return
            self.rendering.add(pid)
        self.client.set_audio_renderer(
            pid,
            self.on_audio,
            audio_source="microphone",
            sample_rate=RESPONDENT_SAMPLE_RATE,
            callback_interval_ms=TRACK_INTERVAL_MS,
        )
        name = participant.get("info", {}).get("userName", "")
        self.out.event("participant_joined", id=pid, userName=str(name))

    def on_participant_left(self, participant: Mapping[str, Any], reason: str) -> None:
        pid = str(participant.get("id", ""))
        with self.rendering_lock:
            self.rendering.discard(pid)
        self.out.event("participant_left", id=pid, reason=reason)

    def on_audio(self, _participant_id: str, audio: daily.AudioData, _source: str) -> None:
        self.out.frame(AUDIO_FRAME, audio.audio_frames)

    def on_app_message(self, message: Any, sender: str) -> None:
        self.out.event("app_message", sender=sender, message=message)

    def on_call_state_updated(self, state: str) -> None:
        self.out.event("call_state", state=state)

    def on_error(self, message: str) -> None:
        self.out.event("error", message=message)


def run(stdin: BinaryIO, stdout: BinaryIO) -> int:
    out = Output(stdout)
    daily.Daily.init()
    bridge = Bridge(out)
    out.event("ready", sampleRateIn=BOT_SAMPLE_RATE, sampleRateOut=RESPONDENT_SAMPLE_RATE)
    clean = False
    try:
        while True:
            frame = read_frame(stdin)
            if frame is None or not bridge.handle(*frame):
                break
        clean = True
    except (ValueError, KeyError, json.JSONDecodeError) as err:
        out.event("error", message=f"bad frame from the worker: {err}")
        return 2
    finally:
        # A clean end (leave, or the worker closed our input) plays what was queued before it.
        bridge.leave(play_queued=clean)
        out.event("closed")
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.stdin.buffer, sys.stdout.buffer))

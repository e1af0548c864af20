"""A fake of daily-python (the `daily` module) with exactly the calls the bridge makes.

Same names, signatures and callback shapes as daily-python 0.36.0 (see its __init__.pyi); Daily's
callbacks arrive on the SDK's own threads, and so do this fake's. With FAKE_DAILY_ROOM=host:port the
client joins a fake room server over TCP (JSON lines, test/fakes/daily-room.ts), where the room's token
is checked and a test respondent talks to the bot; without it, tests drive `FakeRoom` in process.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any


class EventHandler:
    def __init__(self) -> None:
        pass

    def on_participant_joined(self, participant: Mapping[str, Any]) -> None: ...
    def on_participant_left(self, participant: Mapping[str, Any], reason: str) -> None: ...
    def on_app_message(self, message: Any, sender: str) -> None: ...
    def on_call_state_updated(self, state: str) -> None: ...
    def on_error(self, message: str) -> None: ...


class Daily:
    initialized = False

    @staticmethod
    def init(worker_threads: int = 2) -> None:
        Daily.initialized = True
        dump = os.environ.get("PYTHON_FAKE_ENV_DUMP")  # tests read what environment the bridge got
        if dump:
            with open(dump, "w") as f:
                json.dump(dict(os.environ), f)


class AudioData:
    def __init__(self, frames: bytes, sample_rate: int) -> None:
        self.audio_frames = frames
        self.sample_rate = sample_rate
        self.num_channels = 1
        self.bits_per_sample = 16
        self.num_audio_frames = len(frames) // 2


class CustomAudioSource:
    def __init__(self, sample_rate: int, channels: int, auto_silence: bool = True) -> None:
        self.sample_rate = sample_rate
        self.channels = channels
        self.sink: Callable[[bytes], None] = lambda _frames: None
        self.playing_until = 0.0

    def write_frames(self, frame: bytes, completion: Callable[[int], None] | None = None) -> int:
        # Like daily-python, the call returns when the frames have played: 20 ms of audio blocks
        # for 20 ms (measured against the real SDK, no call needed), so a writer is paced at real time.
        self.sink(frame)
        samples = len(frame) // 2 // self.channels
        now = time.monotonic()
        self.playing_until = max(now, self.playing_until) + samples / self.sample_rate
        time.sleep(self.playing_until - now)
        return samples


class CustomAudioTrack:
    def __init__(self, audio_source: CustomAudioSource) -> None:
        self.source = audio_source
        self.id = str(uuid.uuid4())
        _tracks.append(self)


_tracks: list[CustomAudioTrack] = []


Renderer = Callable[[str, AudioData, str], None]


class CallClient:
    """Records what the bridge asked for in `calls`; `instances` lets in-process tests find it."""

    instances: list[CallClient] = []

    def __init__(self, event_handler: EventHandler | None = None) -> None:
        self.handler = event_handler or EventHandler()
        self.calls: list[tuple[str, Any]] = []
        self.renderers: dict[str, tuple[Renderer, int]] = {}
        self.remote: dict[str, Mapping[str, Any]] = {}
        self.local_id = str(uuid.uuid4())
        self.sent_audio = bytearray()
        self.sock: socket.socket | None = None
        self.send_lock = threading.Lock()
        self.released = False
        CallClient.instances.append(self)

    def join(
        self,
        meeting_url: str,
        meeting_token: str | None = None,
        client_settings: Mapping[str, Any] | None = None,
        completion: Callable[[Mapping[str, Any] | None, str | None], None] | None = None,
    ) -> None:
        self.calls.append(("join", {"url": meeting_url, "token": meeting_token, "settings": client_settings}))
        track_id = (client_settings or {})["inputs"]["microphone"]["settings"]["customTrack"]["id"]
        track = next(t for t in _tracks if t.id == track_id)  # Daily refuses unknown track ids too
        track.source.sink = self._send_audio
        address = os.environ.get("FAKE_DAILY_ROOM")
        if address:
            host, port = address.rsplit(":", 1)
            self.sock = socket.create_connection((host, int(port)))
            self._send({"type": "join", "url": meeting_url, "token": meeting_token})
            threading.Thread(target=self._read, args=(completion,), daemon=True).start()
        elif completion:
            threading.Thread(target=completion, args=(self._joined_data(), None), daemon=True).start()

    def _joined_data(self) -> Mapping[str, Any]:
        return {"participants": {"local": {"id": self.local_id, "info": {"isLocal": True}}}}

    def participants(self) -> Mapping[str, Any]:
        return {"local": {"id": self.local_id, "info": {"isLocal": True}}, **self.remote}

    def leave(self, completion: Callable[[str | None], None] | None = None) -> None:
        self.calls.append(("leave", None))
        # Taken under the lock: the reader thread drops the socket too when the room closes it
        # (which it does as soon as it reads this leave).
        with self.send_lock:
            sock, self.sock = self.sock, None
        if sock:
            sock.sendall(json.dumps({"type": "leave"}).encode() + b"\n")
            sock.close()
        self.handler.on_call_state_updated("left")
        if completion:
            completion(None)

    def release(self) -> None:
        self.released = True

    def send_app_message(self, message: Any, participant_id: str | None = None) -> None:
        self.calls.append(("send_app_message", message))
        if self.sock:
            self._send({"type": "app_message", "message": message})

    def set_audio_renderer(
        self,
        participant_id: str,
        callback: Renderer,
        audio_source: str = "microphone",
        sample_rate: int = 16000,
        callback_interval_ms: int = 20,
    ) -> None:
        self.calls.append(("set_audio_renderer", (participant_id, audio_source, sample_rate)))
        self.renderers[participant_id] = (callback, sample_rate)

    # The fake room's side.
    def deliver_audio(self, participant_id: str, frames: bytes) -> None:
        callback, rate = self.renderers[participant_id]
        callback(participant_id, AudioData(frames, rate), "microphone")

    def _send_audio(self, frames: bytes) -> None:
        self.sent_audio += frames
        if self.sock:
            self._send({"type": "audio", "data": base64.b64encode(frames).decode()})

    def _send(self, message: Mapping[str, Any]) -> None:
        # The bridge writes audio and app messages from different threads, as the SDK allows.
        with self.send_lock:
            if self.sock:
                self.sock.sendall(json.dumps(message).encode() + b"\n")

    def _read(self, completion: Callable[[Mapping[str, Any] | None, str | None], None] | None) -> None:
        assert self.sock is not None
        for line in self.sock.makefile("rb"):
            msg = json.loads(line)
            kind = msg["type"]
            if kind == "joined" and completion:
                completion(self._joined_data(), None)
            elif kind == "join_error" and completion:
                completion(None, msg["message"])
            elif kind == "participant_joined":
                self.remote[msg["participant"]["id"]] = msg["participant"]
                self.handler.on_participant_joined(msg["participant"])
            elif kind == "participant_left":
                self.remote.pop(msg["participant"]["id"], None)
                self.handler.on_participant_left(msg["participant"], msg["reason"])
            elif kind == "app_message":
                self.handler.on_app_message(msg["message"], msg["sender"])
            elif kind == "audio" and msg["participantId"] in self.renderers:
                self.deliver_audio(msg["participantId"], base64.b64decode(msg["data"]))
        with self.send_lock:
            gone, self.sock = self.sock is not None, None
        if gone:  # the room server went away (not our own leave)
            self.handler.on_call_state_updated("left")

/**
 * When the interviewer's next utterance starts to be heard on a track that runs all the time
 * (LiveKit's WebRTC audio): from the track's level, sampled every few milliseconds. Armed at the
 * start and after each `audio_end` or `interrupt`; it fires once per arming, and only after the
 * track has been quiet since it was armed, because the control messages come over the data
 * channel ahead of the jitter-buffered audio: the last words' tail may still be playing when
 * `audio_end` says they are over. Pure, so a unit test can drive it sample by sample.
 */
export interface FirstSoundDetector {
  /** A new utterance may start: the next sound after a quiet moment is its first. */
  arm(): void;
  /** One level sample (RMS); true when it is the first sound of the armed utterance. */
  sample(rms: number): boolean;
}

export function firstSoundDetector(speakingRms: number): FirstSoundDetector {
  let armed = true;
  let quietSinceArmed = true;
  return {
    arm() {
      armed = true;
      quietSinceArmed = false;
    },
    sample(rms) {
      if (!armed) return false;
      if (rms < speakingRms) {
        quietSinceArmed = true;
        return false;
      }
      if (!quietSinceArmed) return false;
      armed = false;
      return true;
    },
  };
}

/**
 * Whether the interviewer's last words have played out here, for the end of the interview: the
 * `ended` message also comes over the data channel ahead of the jitter-buffered audio, and on a
 * slow or loaded device the closing words may not even have started when it arrives. Done once
 * the track has been quiet for `quietMs` since `start` (the closing, had it been still to come,
 * would have started meanwhile), or `maxMs` after it whatever the level.
 */
export interface PlayoutWatch {
  /** One level sample (RMS) at `now` (ms). */
  sample(rms: number, now: number): void;
  /** Whether the words have played out by `now`, counting from `start` (when `ended` arrived). */
  done(start: number, now: number): boolean;
}

export function playoutWatch(speakingRms: number, quietMs: number, maxMs: number): PlayoutWatch {
  let lastLoud = Number.NEGATIVE_INFINITY;
  return {
    sample(rms, now) {
      if (rms >= speakingRms) lastLoud = now;
    },
    done(start, now) {
      return now - start >= maxMs || now - Math.max(start, lastLoud) >= quietMs;
    },
  };
}

/** Ends the session early; `ended` is the reason sent to the respondent. */
export class SessionEnd extends Error {
  readonly reason: string;
  readonly ended: 'failed' | 'timeout' | 'hangup';

  constructor(reason: string, ended: 'failed' | 'timeout' | 'hangup', message: string) {
    super(message);
    this.reason = reason;
    this.ended = ended;
  }
}

/** Ends the session early; `ended` is the reason sent to the respondent. */
export class SessionEnd extends Error {
  constructor(
    readonly reason: string,
    readonly ended: 'failed' | 'timeout' | 'hangup',
    message: string,
  ) {
    super(message);
  }
}

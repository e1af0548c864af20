/**
 * The bot's Daily join URL, carried in the bot's job: the room URL with the bot's meeting token as
 * `t` (Daily's own query parameter for it). Pure; the bot splits it again before joining.
 */
export function dailyBotJoinUrl(roomUrl: string, token: string): string {
  const url = new URL(roomUrl);
  url.searchParams.set('t', token);
  return url.href;
}

export function parseDailyJoinUrl(joinUrl: string): { roomUrl: string; token: string } {
  const url = new URL(joinUrl);
  const token = url.searchParams.get('t');
  if (!token) throw new Error('the Daily join URL has no meeting token');
  url.search = '';
  return { roomUrl: url.href, token };
}

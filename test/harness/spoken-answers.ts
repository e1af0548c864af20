/**
 * A fixed set of respondent answers for tests and benches that judge what a recogniser heard: long
 * and short, with numbers and names, and the kinds that trip Moonshine (a short "Yes.", a phrase it
 * tends to repeat). The first five are what the speech server's tests check; the bench takes all.
 */
export const SPOKEN_ANSWERS = [
  'I think the onboarding was the hardest part, mostly because the documentation was out of date.',
  'We tried three different vendors before we picked this one.',
  'Nothing really, it was easy.',
  'The price was fair, but the support team answered slowly.',
  'I would recommend it to a friend who runs a small bakery.',
  'Seven out of ten, because the mobile app still crashes sometimes.',
  'Mostly the weekly reports, and the way they arrive on Monday morning.',
  'Yes.',
] as const;

/**
 * Interview answers as respondents give them: several sentences of SPOKEN_ANSWERS (by index) with
 * thinking pauses between them (ms), 5-20 s of speech each. For the speech bench, which judges
 * decoding that cuts a buffer at its pauses.
 */
export const PAUSED_ANSWERS: ReadonlyArray<{ sentences: readonly number[]; pausesMs: readonly number[] }> = [
  { sentences: [0, 1], pausesMs: [450] },
  { sentences: [3, 2, 4], pausesMs: [650, 300] },
  { sentences: [5, 6, 1, 7], pausesMs: [350, 800, 500] },
  { sentences: [4, 0, 3, 5], pausesMs: [500, 250, 900] },
];

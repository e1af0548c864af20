import { describe, expect, it } from 'vitest';
import { questionKind } from './question-kind.ts';

/** Open or closed, from the question's text (issue 40): the prior of the answer's length. */
describe('the kind of a question', () => {
  it('is closed when it starts with an auxiliary or modal verb, or offers a choice', () => {
    for (const q of [
      'Did you finish the setup?',
      'Is the price right for you?',
      'Would you recommend us?',
      "Don't you use the export?",
      'Thanks. Have you tried the mobile app?',
      'Monthly or yearly?',
      'Which plan do you use, monthly or yearly?',
      'Could you use it offline?',
    ])
      expect(questionKind(q), q).toBe('closed');
  });

  it('is open otherwise: wh-questions, requests, and any question in another language', () => {
    for (const q of [
      'How did you first hear of us?',
      'What should we improve first?',
      'Tell me more about that.',
      'Please tell me, in as much detail as you like, how you first heard about us, and what you expected before you signed up?',
      'Did that help? What would you change?',
      // Requests that start with a modal, and a wh-question holding "or", invite an account.
      'Could you tell me a little more about that?',
      'Can you please walk me through your first week?',
      'Would you describe how the team uses it?',
      'What do you like or dislike about it?',
      'Question 3: tell me a little about how your team has used the product.',
    ])
      expect(questionKind(q), q).toBe('open');
    expect(questionKind('Avez-vous fini ?', 'fr')).toBe('open');
    expect(questionKind('')).toBe('open');
  });
});

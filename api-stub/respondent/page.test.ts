import { describe, expect, it } from 'vitest';
import { escapeHtml, renderPage, scriptJson } from './page.ts';

describe('respondent page HTML', () => {
  const facts = { sessionId: 'inv_abc', interviewId: 'dpl_x', title: 'Onboarding', status: 'CLICKED', language: 'en' };

  it('renders the session facts into the JSON config and never the publishable key', () => {
    const html = renderPage(facts, '/respondent/assets');
    const json = /<script type="application\/json" id="service-config">(.*?)<\/script>/s.exec(html)?.[1];
    expect(JSON.parse(json!)).toEqual({ sessionId: 'inv_abc', interviewId: 'dpl_x', title: 'Onboarding', status: 'CLICKED' });
    expect(html).not.toMatch(/pk_(test|live)_/);
    expect(html).toContain('<script type="module" src="/respondent/assets/main.js"></script>');
  });

  it('cannot be broken out of by a hostile title, in the markup or in the JSON', () => {
    const title = '</script><script>alert(1)</script><img src=x onerror=alert(2)>';
    const html = renderPage({ ...facts, title }, '/a');
    expect(html).not.toContain('<script>alert(1)');
    expect(html).not.toContain('<img src=x');
    const json = /id="service-config">(.*?)<\/script>/s.exec(html)?.[1];
    expect(JSON.parse(json!).title).toBe(title);
  });

  it('falls back to English for a language tag that is not one', () => {
    expect(renderPage({ ...facts, language: 'en"><script>' }, '/a')).toContain('<html lang="en">');
    expect(renderPage({ ...facts, language: 'pt-BR' }, '/a')).toContain('<html lang="pt-BR">');
  });

  it('escapes HTML and JSON for script elements', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    expect(scriptJson({ t: '</script>\u2028' })).toBe('{"t":"\\u003c/script\\u003e\\u2028"}');
  });
});

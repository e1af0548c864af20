import { z } from 'zod';

/**
 * The admin body `PUT /api/v2/workspace/self-host`: an https:// endpoint and a shared token.
 * The same rules apply to seed entries (seed.ts has its own schema with the same limits).
 */
export const pipelineEndpointSchema = z
  .string()
  .max(2048)
  .superRefine((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'expected an absolute https:// URL' });
      return;
    }
    if (url.protocol !== 'https:')
      ctx.addIssue({
        code: 'custom',
        message: `must be an https:// URL (got ${url.protocol}//); the service only speaks HTTPS to workers`,
      });
    else if (url.username || url.password)
      ctx.addIssue({ code: 'custom', message: 'must not carry credentials; put the shared secret in pipelineToken' });
    else if (url.hash) ctx.addIssue({ code: 'custom', message: 'must not carry a #fragment' });
  });

export const pipelineTokenSchema = z
  .string()
  .min(16, 'must be at least 16 characters (use a random secret, e.g. `openssl rand -hex 32`)')
  .max(512, 'must be at most 512 characters')
  .regex(/^[\x21-\x7e]+$/, 'must be visible ASCII without spaces (it travels in an Authorization header)');

export const selfHostBody = z.strictObject({
  pipelineEndpoint: pipelineEndpointSchema,
  pipelineToken: pipelineTokenSchema,
});

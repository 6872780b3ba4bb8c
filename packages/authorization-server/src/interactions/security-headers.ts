import type { Response } from 'express';
import helmet from 'helmet';

/**
 * The headers of every HTML page of the AS (login, consent, account): a CSP with no script at
 * all and styles only from our stylesheet, no referrer, no framing. `withFormTargets` lets a
 * page's form post end in a redirect to the origins in `res.locals.formTargets`.
 */
export const pageSecurityHeaders = (withFormTargets: boolean) =>
  helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'"],
        scriptSrc: ["'none'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
        // A form post ends in a redirect to the client (or an upstream provider); browsers
        // apply form-action to that redirect too.
        formAction: withFormTargets
          ? ["'self'", (_req, res) => ((res as Response).locals.formTargets as string[] | undefined)?.join(' ') ?? '']
          : ["'self'"],
        frameAncestors: ["'none'"],
      },
    },
    referrerPolicy: { policy: 'no-referrer' },
    // MCP security best practices §Consent UI: no framing (CSP frame-ancestors + XFO DENY).
    xFrameOptions: { action: 'deny' },
  });

/**
 * Reading the forms of server-rendered pages without a browser: what the testing kit's headless
 * user agent and the repository's tests submit on the authorization server's login and consent
 * pages. The inverse of {@link escapeHtml} for attribute values, kept beside it.
 */
import type { escapeHtml } from './html.js';

/** The first `<form>` of a server-rendered page: where it posts and what it carries. */
export interface ParsedForm {
  action: string;
  /** Hidden fields (CSRF tokens and the like), entities decoded. */
  hidden: Record<string, string>;
  /** Every named input of the form, in order. */
  fieldNames: string[];
}

/** Reads the first `<form>` of a page rendered by a server (no scripts involved); undefined without one. */
export function parseForm(html: string): ParsedForm | undefined {
  const form = /<form\b[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) return undefined;
  const action = /\baction="([^"]*)"/i.exec(form[0])?.[1];
  if (action === undefined) return undefined;
  const hidden: Record<string, string> = {};
  const fieldNames: string[] = [];
  for (const input of form[1]!.matchAll(/<input\b[^>]*>/gi)) {
    const name = /\bname="([^"]*)"/i.exec(input[0])?.[1];
    if (!name) continue;
    fieldNames.push(decodeEntities(name));
    if (/\btype="hidden"/i.test(input[0])) hidden[decodeEntities(name)] = decodeEntities(/\bvalue="([^"]*)"/i.exec(input[0])?.[1] ?? '');
  }
  return { action: decodeEntities(action), hidden, fieldNames };
}

/** Undoes the HTML escaping of attribute values (the five entities {@link escapeHtml} and its like write). */
export function decodeEntities(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&#x27;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

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
  /**
   * The named submit buttons (`<button>` of type submit, the default, and `<input type="submit">`),
   * in order, values decoded: what a click adds to the form's fields.
   */
  submits: { name: string; value: string }[];
}

/** A form: its opening tag, then its content. */
const FORM = /(<form\b[^>]*>)([\s\S]*?)<\/form>/i;

/** Reads the first `<form>` of a page rendered by a server (no scripts involved); undefined without one. */
export function parseForm(html: string): ParsedForm | undefined {
  const form = FORM.exec(html);
  return form ? readForm(form[1]!, form[2]!) : undefined;
}

/** Every `<form>` of a page with an action, in order (e.g. a sign-in page that offers other forms first). */
export function parseForms(html: string): ParsedForm[] {
  return [...html.matchAll(new RegExp(FORM.source, 'gi'))].flatMap((form) => readForm(form[1]!, form[2]!) ?? []);
}

function readForm(tag: string, content: string): ParsedForm | undefined {
  const action = /\baction="([^"]*)"/i.exec(tag)?.[1];
  if (action === undefined) return undefined;
  const hidden: Record<string, string> = {};
  const fieldNames: string[] = [];
  for (const input of content.matchAll(/<input\b[^>]*>/gi)) {
    const name = /\bname="([^"]*)"/i.exec(input[0])?.[1];
    if (!name) continue;
    fieldNames.push(decodeEntities(name));
    if (/\btype="hidden"/i.test(input[0])) hidden[decodeEntities(name)] = attributeValue(input[0]);
  }
  const submits: ParsedForm['submits'] = [];
  for (const control of content.matchAll(/<button\b[^>]*>|<input\b[^>]*\btype="submit"[^>]*>/gi)) {
    const name = /\bname="([^"]*)"/i.exec(control[0])?.[1];
    const type = /\btype="([^"]*)"/i.exec(control[0])?.[1]?.toLowerCase() ?? 'submit';
    if (name && type === 'submit') submits.push({ name: decodeEntities(name), value: attributeValue(control[0]) });
  }
  return { action: decodeEntities(action), hidden, fieldNames, submits };
}

function attributeValue(tag: string): string {
  return decodeEntities(/\bvalue="([^"]*)"/i.exec(tag)?.[1] ?? '');
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

import { Injectable } from '@nestjs/common';
import { Eta } from 'eta';
import type { FastifyReply } from 'fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WebVisitor } from './web-session';

/** Where the templates and the stylesheet are, beside this file (the build copies them to dist). */
const VIEWS = join(__dirname, 'views');
export const STYLESHEET = readFileSync(join(__dirname, 'static', 'castlog.css'));

/** No script runs on the pages, and nothing loads from elsewhere but feed artwork over https; no
 * form posts anywhere else, no other site frames them. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self' https:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/** The sections of the navigation, in its order. */
export const SECTIONS = [
  { path: '/web/subscriptions', label: 'Subscriptions' },
  { path: '/web/devices', label: 'Devices' },
  { path: '/web/history', label: 'Listening history' },
  { path: '/web/opml', label: 'OPML' },
  { path: '/web/app-passwords', label: 'App passwords' },
  { path: '/web/account', label: 'Account' },
] as const;

/** What every page's layout reads besides its own data. */
export interface PageFrame {
  readonly title: string;
  /** The section the page belongs to (its path), highlighted in the navigation. */
  readonly section?: string;
  readonly visitor?: WebVisitor;
  /** A line saying what the last action did. */
  readonly notice?: string;
  readonly error?: string;
}

/** Renders the pages' templates (Eta, every `<%= %>` escaped) and sends them with the headers every
 * page has. */
@Injectable()
export class Pages {
  private readonly eta = new Eta({ views: VIEWS, autoEscape: true, cache: true });

  send(reply: FastifyReply, view: string, frame: PageFrame, data: object = {}, status = 200): FastifyReply {
    const html = this.eta.render(view, { ...data, frame, sections: SECTIONS });
    return pageHeaders(reply).status(status).type('text/html; charset=utf-8').send(html);
  }
}

/** The headers of every page: the policy above, no sniffing, no caching of personal pages, no
 * referrer sent elsewhere (a feed URL can carry a token). */
export function pageHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CONTENT_SECURITY_POLICY)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .header('x-frame-options', 'DENY')
    .header('cache-control', 'no-store');
}

/** `303 See Other` to a page of the site: where a form's answer sends the browser. */
export function seeOther(reply: FastifyReply, path: string): FastifyReply {
  return pageHeaders(reply).status(303).header('location', path).send();
}

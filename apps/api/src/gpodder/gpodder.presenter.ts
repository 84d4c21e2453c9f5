import {
  checkFeedUrl,
  DEVICE_ID,
  DEVICE_TYPES,
  EPISODE_ACTION_KINDS,
  MAX_SETTINGS_KEYS,
  toUnixSeconds,
  UploadedOutcome,
} from '@castlog/domain';
import { DeviceView, EpisodeActionView } from '@castlog/read-model';
import { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { trimFeedUrl } from './gpodder.request';

// The gpodder.net face's answers and their OpenAPI schemas. Timestamps of subscriptions and
// uploads are whole Unix seconds (`toUnixSeconds` of the user's clock); an episode action's own
// timestamp is `YYYY-MM-DDTHH:MM:SS` in UTC, as gpodder.net writes them.

const urls = (description: string): SchemaObject => ({
  type: 'array',
  items: { type: 'string' },
  description,
});
const unixSeconds = (description: string): SchemaObject => ({
  type: 'integer',
  minimum: 0,
  description,
  example: 1_677_160_800,
});
const TIMESTAMP_DESCRIPTION =
  'Unix seconds of the last change; send it back as `since` (inclusive) to get what changed from then on';

export const DEVICES_SCHEMA: SchemaObject = {
  type: 'array',
  items: {
    type: 'object',
    required: ['id', 'caption', 'type', 'subscriptions'],
    additionalProperties: false,
    properties: {
      id: { type: 'string', pattern: DEVICE_ID.source, example: 'phone' },
      caption: { type: 'string', example: 'My phone' },
      type: { type: 'string', enum: [...DEVICE_TYPES] },
      subscriptions: {
        type: 'integer',
        minimum: 0,
        description: 'The feeds the user is subscribed to: every device shares the one set',
      },
    },
  },
};

export const UPLOAD_RESULT_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['timestamp', 'update_urls'],
  additionalProperties: false,
  properties: {
    timestamp: unixSeconds(TIMESTAMP_DESCRIPTION),
    update_urls: {
      type: 'array',
      description:
        '`[sent, stored]` for each URL the client should rewrite: sent with white space around it, stored in ' +
        'another spelling, or `""` when refused',
      items: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 2 },
    },
  },
};

export const SUBSCRIPTION_CHANGES_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['add', 'remove', 'timestamp'],
  additionalProperties: false,
  properties: {
    add: urls('Subscribed now, changed at or after since'),
    remove: urls('Unsubscribed or deleted, changed at or after since'),
    timestamp: unixSeconds(TIMESTAMP_DESCRIPTION),
  },
};

export const SYNC_STATUS_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['synchronized', 'not-synchronized'],
  additionalProperties: false,
  properties: {
    synchronized: {
      type: 'array',
      description: "One group of all the user's devices (none while the user has no device)",
      items: { type: 'array', items: { type: 'string' } },
      maxItems: 1,
    },
    'not-synchronized': { type: 'array', items: { type: 'string' }, maxItems: 0 },
  },
};

const ACTION_PROPERTIES: Record<string, SchemaObject> = {
  podcast: { type: 'string', minLength: 1, description: 'The feed URL' },
  episode: { type: 'string', minLength: 1, description: 'The media URL' },
  action: { type: 'string', enum: [...EPISODE_ACTION_KINDS] },
  device: { type: 'string', pattern: DEVICE_ID.source },
  guid: { type: 'string' },
  started: { type: 'integer', minimum: 0, description: 'play only: seconds' },
  position: { type: 'integer', minimum: 0, description: 'play only: seconds' },
  total: { type: 'integer', minimum: 0, description: 'play only: seconds' },
};

export const EPISODE_ACTIONS_RESULT_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['timestamp', 'update_urls'],
  additionalProperties: false,
  properties: {
    timestamp: unixSeconds(TIMESTAMP_DESCRIPTION),
    update_urls: {
      type: 'array',
      description: '`[sent, trimmed]` for each podcast URL sent with white space around it',
      items: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 2 },
    },
  },
};

export const EPISODE_ACTIONS_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['actions', 'timestamp'],
  additionalProperties: false,
  properties: {
    actions: {
      type: 'array',
      items: {
        type: 'object',
        required: ['podcast', 'episode', 'action', 'timestamp'],
        additionalProperties: false,
        properties: {
          ...ACTION_PROPERTIES,
          timestamp: {
            type: 'string',
            pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}$',
            description: 'When the action happened, UTC',
          },
        },
      },
    },
    timestamp: unixSeconds(TIMESTAMP_DESCRIPTION),
  },
};

export const SIMPLE_LIST_SCHEMA: SchemaObject = urls('The subscribed feed URLs');

export const SETTINGS_SCHEMA: SchemaObject = {
  type: 'object',
  additionalProperties: true,
  maxProperties: MAX_SETTINGS_KEYS,
  description: "The scope's settings: each key with its JSON value",
  example: { public_subscriptions: false, auto_flattr: true },
};

export interface DeviceBody {
  readonly id: string;
  readonly caption: string;
  readonly type: string;
  readonly subscriptions: number;
}

/** A device as gpodder.net lists it (DEVICES_SCHEMA): what the read model knows beyond that, its
 * last use among it, is for castlog's own pages. */
export const presentDevice = ({ id, caption, type, subscriptions }: DeviceView): DeviceBody => ({
  id,
  caption,
  type,
  subscriptions,
});

export interface UploadResultBody {
  readonly timestamp: number;
  readonly update_urls: readonly (readonly [string, string])[];
}

/** An upload's answer: the decider's `update_urls` speak of the URLs as it judged them, trimmed of
 * white space by the API (`trimFeedUrl`); the client is answered about the URLs as it `sent` them. */
export const presentUpload = (outcome: UploadedOutcome, sent: readonly unknown[]): UploadResultBody => ({
  timestamp: toUnixSeconds(outcome.clock),
  update_urls: updateUrlsAsSent(outcome.updateUrls, sent),
});

/** `update_urls` for the URLs as sent: each pair the decider gave for a URL as judged, under every
 * spelling sent that trims to it, then `[sent, trimmed]` for each trimmed URL it said nothing of
 * (taken as trimmed). A URL sent as it was judged keeps the decider's pair; the decider's pairs of
 * values that were not strings (`[42, ""]` as `["42", ""]`) stay as they are. */
export function updateUrlsAsSent(
  judged: readonly (readonly [string, string])[],
  sent: readonly unknown[],
): [string, string][] {
  const spellings = new Map<string, Set<string>>();
  for (const value of sent) {
    const judgedAs = typeof value === 'string' ? trimFeedUrl(value) : checkFeedUrl(value).feedUrl;
    const spelling = typeof value === 'string' ? value : judgedAs;
    const known = spellings.get(judgedAs);
    if (known === undefined) spellings.set(judgedAs, new Set([spelling]));
    else known.add(spelling);
  }
  const answer = new Map<string, string>();
  for (const [url, rewritten] of judged)
    for (const spelling of spellings.get(url) ?? [url]) answer.set(spelling, rewritten);
  for (const [url, sentAs] of spellings)
    for (const spelling of sentAs) if (spelling !== url && !answer.has(spelling)) answer.set(spelling, url);
  return [...answer];
}

export type EpisodeActionBody = Partial<Record<keyof EpisodeActionView, string | number>>;

/** An action with the fields it has: podcast, episode, action and timestamp always. */
export function presentEpisodeAction(action: EpisodeActionView): EpisodeActionBody {
  const body: EpisodeActionBody = {};
  for (const [key, value] of Object.entries(action) as [keyof EpisodeActionView, unknown][]) {
    if (typeof value === 'string' || typeof value === 'number') body[key] = value;
  }
  return body;
}

/** The simple API's jsonp format, as mygpo writes it: `callback(<the JSON>)`. The callback is
 * checked already (JSONP_CALLBACK); U+2028 and U+2029, valid in JSON but line ends to JavaScript
 * before ES2019, are escaped. */
export const toJsonp = (callback: string, value: unknown): string =>
  `${callback}(${JSON.stringify(value)
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')})`;

/** The simple API's text format: one URL per line, each line ending with a newline. */
export const toUrlLines = (list: readonly string[]): string => list.map((url) => `${url}\n`).join('');

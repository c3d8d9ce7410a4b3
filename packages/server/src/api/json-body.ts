/**
 * Reading a JSON body's text, the same for every way in (a request's `application/json` or merge-patch
 * body, a frame of the call stream): depth measured on the text first (json-depth.ts), then Fastify's
 * parser (which refuses prototype keys), then well-formed text (well-formed-text.ts).
 */
import type { FastifyRequest } from 'fastify';
import { badJsonError, refusedJsonError } from './error-handler.js';
import { jsonDeeperThan, tooDeepError } from './json-depth.js';
import { illFormedTextError } from './well-formed-text.js';

/** Fastify's JSON parser (`getDefaultJsonParser`), which calls `done` before it returns. */
export type JsonParser = (
  request: unknown,
  text: string,
  done: (err: Error | null, value?: unknown) => void,
) => void;

/** The value of a non-empty JSON body; throws the error that refuses it. */
export function readJsonBody(
  parseJson: JsonParser,
  request: unknown,
  text: string,
  maxDepth: number,
): unknown {
  if (jsonDeeperThan(text, maxDepth)) throw tooDeepError(maxDepth);
  let failed: Error | null = null;
  let body: unknown;
  parseJson(request, text, (err, value) => {
    failed = err;
    body = value;
  });
  if (failed !== null) throw refusedJsonError(text, badJsonError());
  const illFormed = illFormedTextError(text, body);
  if (illFormed !== null) throw illFormed;
  return body;
}

/** A content-type parser of JSON bodies (`parseAs: 'string'`); an empty body is no body. */
export function jsonBodyParser(parseJson: JsonParser, maxDepth: number) {
  return (
    request: FastifyRequest,
    text: unknown,
    done: (err: Error | null, value?: unknown) => void,
  ): void => {
    let value: unknown;
    try {
      value = text === '' ? undefined : readJsonBody(parseJson, request, text as string, maxDepth);
    } catch (err) {
      done(err as Error, undefined);
      return;
    }
    done(null, value);
  };
}

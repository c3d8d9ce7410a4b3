/**
 * The dashboard's static assets (one script, one stylesheet), read once at start and served from
 * memory, gzip-compressed when the browser accepts it, under versioned URLs that may be cached forever.
 * They come from the server's own dist (`scripts/copy-assets.mjs` copies them there at build), or,
 * when running from the sources, straight from the @rouse/dashboard package.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { type AssetUrls, assetsDir } from '@rouse/dashboard';

export interface Asset {
  body: Buffer;
  gzip: Buffer;
  contentType: string;
  etag: string;
}

export interface Assets {
  urls: AssetUrls;
  byName: Map<string, Asset>;
}

const FILES: [string, string][] = [
  ['app.js', 'text/javascript; charset=utf-8'],
  ['app.css', 'text/css; charset=utf-8'],
];

function folder(): string {
  const copied = fileURLToPath(new URL('./assets/', import.meta.url));
  return existsSync(join(copied, 'app.js')) ? copied : assetsDir();
}

export function loadAssets(): Assets {
  const dir = folder();
  const byName = new Map<string, Asset>();
  for (const [name, contentType] of FILES) {
    const body = readFileSync(join(dir, name));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"`;
    byName.set(name, { body, gzip: gzipSync(body, { level: 9 }), contentType, etag });
  }
  const v = (name: string) => byName.get(name)?.etag.slice(1, -1) ?? '0';
  return {
    urls: { js: `/assets/app.js?v=${v('app.js')}`, css: `/assets/app.css?v=${v('app.css')}` },
    byName,
  };
}

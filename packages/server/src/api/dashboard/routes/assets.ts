/** The dashboard's static assets: fingerprinted, cached for a year, gzipped when the browser takes it. */
import { RouseError } from '../../../core/errors.js';
import type { Site } from '../site.js';

export function registerAssetRoutes(site: Site): void {
  const { scope, assets } = site;

  scope.get('/assets/:name', async (request, reply) => {
    const asset = assets.byName.get((request.params as { name: string }).name);
    if (asset === undefined) throw new RouseError('not_found', 'no such asset', { kind: 'asset' });
    reply
      .header('content-type', asset.contentType)
      .header('etag', asset.etag)
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('vary', 'accept-encoding');
    if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
    if (/\bgzip\b/.test(request.headers['accept-encoding'] ?? '')) {
      return reply.header('content-encoding', 'gzip').send(asset.gzip);
    }
    return reply.send(asset.body);
  });
}

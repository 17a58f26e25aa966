import type { StatsService } from './stats.ts';
import type { TrackingRecorder } from './tracking-recorder.ts';

/**
 * The stats service with every read made after the opens and clicks this process has buffered
 * are written. A click's redirect answers before the group commit writes its event, so a page it
 * leads to in the same process (the demo's "See your click counted" lands on the dashboard) would
 * otherwise show the figure without it. When nothing is buffered the flush costs nothing; when
 * it fails (database down) the read goes ahead and shows what is stored, or fails on its own.
 */
export function statsAfterFlush(stats: StatsService, recorder: Pick<TrackingRecorder, 'flush'>): StatsService {
  const flushed = () => recorder.flush().catch(() => {});
  return {
    getCampaignStats: (...args) => flushed().then(() => stats.getCampaignStats(...args)),
    getCampaignReport: (...args) => flushed().then(() => stats.getCampaignReport(...args)),
    listCampaigns: (...args) => flushed().then(() => stats.listCampaigns(...args)),
    // enrollment counts: nothing the recorder holds changes them
    listSequences: () => stats.listSequences(),
  };
}

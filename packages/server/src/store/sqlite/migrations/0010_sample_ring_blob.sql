-- The agents' metric sample ring becomes binary: every heartbeat rewrites it, and formatting and
-- parsing it as JSON text was a visible share of a beat's cost. Oldest first, bounded; float64
-- little-endian, four per sample (at, rssBytes, cpuPercent, iterationMs; NaN = not reported);
-- NULL = no sample yet. Recent samples are a detection window, not history, so the rings restart.
ALTER TABLE agents DROP COLUMN samples;
ALTER TABLE agents ADD COLUMN samples BLOB;

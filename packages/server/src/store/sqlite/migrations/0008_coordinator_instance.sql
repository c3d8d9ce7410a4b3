-- 0008_coordinator_instance: which process wrote a coordinator's presence (a random token per start),
-- so that a second process started under the same coordinator id cannot take over a live presence
-- (the same column as PostgreSQL's). NULL: written by a Rouse that predates it.

ALTER TABLE coordinators ADD COLUMN instance TEXT;

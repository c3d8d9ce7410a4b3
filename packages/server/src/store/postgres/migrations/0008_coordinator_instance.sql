-- 0008_coordinator_instance: which process wrote a coordinator's presence (a random token per start),
-- so that a second process started under the same coordinator id cannot take over a live presence:
-- two processes under one id would otherwise both renew every shard as "theirs", each blind to the
-- other. NULL: written by a Rouse that predates it.

ALTER TABLE coordinators ADD COLUMN instance text;

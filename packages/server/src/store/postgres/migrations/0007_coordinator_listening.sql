-- 0007_coordinator_listening: whether a coordinator has clients on its live event stream
-- (`GET /v1/events`). Written with its presence at every shard renewal; while any coordinator has
-- them, the others relay the transitions they make to it (NOTIFY), and only then.

ALTER TABLE coordinators ADD COLUMN listening boolean NOT NULL DEFAULT false;

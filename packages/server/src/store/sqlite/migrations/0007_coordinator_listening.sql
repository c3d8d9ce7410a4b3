-- 0007_coordinator_listening: whether a coordinator has clients on its live event stream
-- (`GET /v1/events`), written with its presence (the same column as PostgreSQL's).

ALTER TABLE coordinators ADD COLUMN listening INTEGER NOT NULL DEFAULT 0;

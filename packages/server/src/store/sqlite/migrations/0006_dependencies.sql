-- 0006_dependencies: the last reported state of each external dependency agents need (docs/design.md §6),
-- kept across restarts (the same table as PostgreSQL's, where several coordinators share it).
-- `version` grows with every report.

CREATE TABLE dependencies (
  name        TEXT    PRIMARY KEY,
  state       TEXT    NOT NULL,
  until       INTEGER,
  since       INTEGER NOT NULL,
  reported_by TEXT,
  message     TEXT,
  version     INTEGER NOT NULL
);

-- 0006_dependencies: the last reported state of each external dependency agents need (docs/design.md §6),
-- shared by every coordinator: each keeps a copy it refreshes every second, so a rate limit reported
-- through one coordinator stops the claims of all of them. `version` grows with every report: a copy
-- takes a row only when it is newer than what it has.

CREATE TABLE dependencies (
  name        text    PRIMARY KEY,
  state       text    NOT NULL,
  until       bigint,
  since       bigint  NOT NULL,
  reported_by text,
  message     text,
  version     bigint  NOT NULL
);

-- The readiness probe's write (api-stub/db/write-health.ts): after a write failed for lack of space
-- or an I/O error, /readyz writes a row here that needs fresh pages, and deletes it, to learn whether
-- the database can write again. Always empty between probes.
CREATE TABLE write_probe (
  id INTEGER PRIMARY KEY,
  filler BLOB NOT NULL
) STRICT;

-- v1: the original layout.
CREATE TABLE IF NOT EXISTS processes(
  process_id INTEGER PRIMARY KEY AUTOINCREMENT,
  process_key TEXT UNIQUE NOT NULL,
  job_id TEXT NOT NULL,
  identity BLOB NOT NULL,
  first_seen INTEGER NOT NULL,
  last_seen INTEGER NOT NULL,
  event_count INTEGER NOT NULL DEFAULT 0,
  batch_count INTEGER NOT NULL DEFAULT 0,
  max_sequence INTEGER NOT NULL DEFAULT 0,
  cupti_dropped INTEGER NOT NULL DEFAULT 0,
  queue_dropped INTEGER NOT NULL DEFAULT 0,
  spill_dropped INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS processes_by_job ON processes(job_id);
CREATE TABLE IF NOT EXISTS dictionary(
  chunk INTEGER PRIMARY KEY AUTOINCREMENT,
  process_id INTEGER NOT NULL,
  defs BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS dictionary_by_process ON dictionary(process_id, chunk);
CREATE TABLE IF NOT EXISTS segments(
  segment_id INTEGER PRIMARY KEY,
  bytes INTEGER NOT NULL,
  created INTEGER NOT NULL,
  last_write INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS batches(
  process_id INTEGER NOT NULL,
  sequence INTEGER NOT NULL,
  min_ns INTEGER NOT NULL,
  max_ns INTEGER NOT NULL,
  event_count INTEGER NOT NULL,
  segment_id INTEGER NOT NULL,
  offset INTEGER NOT NULL,
  length INTEGER NOT NULL,
  PRIMARY KEY(process_id, sequence)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS batches_by_time ON batches(process_id, max_ns);
CREATE INDEX IF NOT EXISTS batches_by_segment ON batches(segment_id);
CREATE TABLE IF NOT EXISTS steps(
  process_id INTEGER NOT NULL,
  number INTEGER NOT NULL,
  start_ns INTEGER NOT NULL,
  end_ns INTEGER NOT NULL,
  source TEXT NOT NULL,
  PRIMARY KEY(process_id, number)) WITHOUT ROWID;

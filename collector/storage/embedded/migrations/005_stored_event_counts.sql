-- v5: a process's event_count is what is stored of it, no longer what was ever stored: retention
-- and quarantine subtract what they take (batch_count and max_sequence still count every batch,
-- so that an evicted batch is not reported missing). Steps that end before a process's oldest
-- stored batch go with it. Data dirs from before get both from what their index holds.
CREATE TEMP TABLE v5_stored(process_id INTEGER PRIMARY KEY, oldest_ns INTEGER, events INTEGER);
INSERT INTO v5_stored SELECT process_id, MIN(min_ns), SUM(event_count) FROM batches
  WHERE sequence > 0 GROUP BY process_id;
UPDATE processes SET event_count = COALESCE(
  (SELECT events FROM v5_stored s WHERE s.process_id = processes.process_id), 0);
DELETE FROM steps WHERE end_ns < COALESCE(
  (SELECT oldest_ns FROM v5_stored s WHERE s.process_id = steps.process_id), 9223372036854775807);
DROP TABLE v5_stored;

-- 003_stored_event_counts: a process's event_count is what is stored of it, no longer what was
-- ever stored: dropping a partition subtracts its events (pg_batch_writer.cc; batch_count and
-- max_sequence still count every batch, so eviction is not reported as missing batches). Steps
-- that end before a process's oldest stored batch go with it. Databases from before get both
-- from what they hold.
CREATE TEMP TABLE v3_stored ON COMMIT DROP AS
  SELECT process_id, MIN(min_ns) AS oldest_ns, SUM(event_count) AS events
  FROM batches GROUP BY process_id;
UPDATE processes p SET event_count = COALESCE(
  (SELECT s.events FROM v3_stored s WHERE s.process_id = p.process_id), 0);
DELETE FROM steps st USING processes p LEFT JOIN v3_stored s ON s.process_id = p.process_id
  WHERE st.process_id = p.process_id AND (s.oldest_ns IS NULL OR st.end_ns < s.oldest_ns);

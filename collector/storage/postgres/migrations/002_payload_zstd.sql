-- 002_payload_zstd: payloads may be stored zstd-compressed, flagged per row (like the embedded
-- store's segment record flag). Rows written before stay as they are (false: the wire form).
-- A constant default makes this a catalog-only change, whatever the table's size.
ALTER TABLE batches ADD COLUMN payload_zstd boolean NOT NULL DEFAULT false;

DROP FUNCTION append_batch(bigint, bigint, bigint, bigint, bigint, bigint, bigint, bigint, bigint,
                           bigint, bytea);

-- As in 001, plus the flag. Returns 0 stored, 1 no such process, 2 already stored.
CREATE FUNCTION append_batch(p_segment bigint, p_process bigint, p_sequence bigint,
                             p_min_ns bigint, p_max_ns bigint, p_events bigint,
                             p_cupti bigint, p_queue bigint, p_spill bigint, p_now_ns bigint,
                             p_payload bytea, p_payload_zstd boolean)
RETURNS integer LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
DECLARE
  stored_max bigint;
BEGIN
  -- The row lock serializes appends of one process until commit, so the duplicate check below
  -- cannot race with another append of the same sequence.
  SELECT max_sequence INTO stored_max FROM processes WHERE process_id = p_process FOR UPDATE;
  IF NOT FOUND THEN
    RETURN 1;
  END IF;
  -- In-order batches (the common case) are above every stored sequence: no index probes.
  IF p_sequence <= stored_max AND EXISTS (
      SELECT 1 FROM batches WHERE process_id = p_process AND sequence = p_sequence) THEN
    RETURN 2;
  END IF;
  INSERT INTO batches(segment_id, process_id, sequence, min_ns, max_ns, event_count,
                      cupti_dropped, queue_dropped, spill_dropped, stored_ns, payload,
                      payload_zstd)
  VALUES (p_segment, p_process, p_sequence, p_min_ns, p_max_ns, p_events,
          p_cupti, p_queue, p_spill, p_now_ns, p_payload, p_payload_zstd);
  UPDATE processes SET
    event_count = event_count + p_events,
    batch_count = batch_count + 1,
    max_sequence = GREATEST(max_sequence, p_sequence),
    cupti_dropped = GREATEST(cupti_dropped, p_cupti),
    queue_dropped = GREATEST(queue_dropped, p_queue),
    spill_dropped = GREATEST(spill_dropped, p_spill),
    last_seen_ns = p_now_ns
  WHERE process_id = p_process;
  RETURN 0;
END
$fn$;

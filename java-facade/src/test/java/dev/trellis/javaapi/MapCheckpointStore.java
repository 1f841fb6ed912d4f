package dev.trellis.javaapi;

import dev.trellis.checkpoint.CheckpointConflictException;
import dev.trellis.checkpoint.CheckpointRecord;
import dev.trellis.checkpoint.FencedOutException;
import dev.trellis.checkpoint.Lease;
import dev.trellis.checkpoint.RunInfo;
import dev.trellis.checkpoint.RunOwnedException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A checkpoint store written in plain Java against {@link AsyncCheckpointStore}: maps guarded by one lock, every
 * operation completed on a thread of its own ("I/O"), as a store over a blocking driver would. It implements the
 * lease, fencing, sequence and prune rules itself.
 */
class MapCheckpointStore implements AsyncCheckpointStore {
    private static final class Run {
        String owner;
        Instant leaseUntil;
        long epoch;
        String graphId;
        final NavigableMap<Long, CheckpointRecord> checkpoints = new TreeMap<>();
    }

    private final Map<String, Run> runs = new TreeMap<>();
    private final Clock clock = Clock.systemUTC();
    private final Duration leaseDuration = Duration.ofSeconds(30);
    private final ExecutorService io = Executors.newSingleThreadExecutor(r -> {
        Thread thread = new Thread(r, "map-store-io");
        thread.setDaemon(true);
        return thread;
    });
    final AtomicInteger appends = new AtomicInteger();
    volatile boolean closed;

    private <T> CompletionStage<T> async(Supplier<T> operation) {
        return CompletableFuture.supplyAsync(() -> {
            synchronized (runs) {
                return operation.get();
            }
        }, io);
    }

    @Override
    public CompletionStage<Lease> claim(String runId, String owner) {
        return async(() -> {
            Run run = runs.computeIfAbsent(runId, id -> new Run());
            Instant now = clock.instant();
            if (run.owner != null && !run.owner.equals(owner) && run.leaseUntil.isAfter(now)) {
                throw new RunOwnedException(runId, owner, run.owner, run.leaseUntil);
            }
            run.epoch++;
            run.owner = owner;
            run.leaseUntil = now.plus(leaseDuration);
            return new Lease(runId, owner, run.epoch, run.leaseUntil);
        });
    }

    @Override
    public CompletionStage<Lease> renew(Lease lease) {
        return async(() -> {
            Run run = writable(lease);
            run.leaseUntil = clock.instant().plus(leaseDuration);
            return new Lease(lease.getRunId(), lease.getOwner(), lease.getEpoch(), run.leaseUntil);
        });
    }

    @Override
    public CompletionStage<Void> release(Lease lease) {
        return async(() -> {
            Run run = runs.get(lease.getRunId());
            if (run != null && run.epoch == lease.getEpoch() && lease.getOwner().equals(run.owner)) {
                run.owner = null;
                run.leaseUntil = null;
            }
            return null;
        });
    }

    @Override
    public CompletionStage<Void> append(Lease lease, CheckpointRecord record) {
        return async(() -> {
            Run run = writable(lease);
            long latest = run.checkpoints.isEmpty() ? 0 : run.checkpoints.lastKey();
            Long parent = record.getParentSequence();
            if (record.getSequence() != latest + 1 || (parent != null && !run.checkpoints.containsKey(parent))) {
                throw new CheckpointConflictException(record.getRunId(), record.getSequence(), latest,
                    "checkpoint " + record.getSequence() + " does not follow " + latest);
            }
            run.checkpoints.put(record.getSequence(), record);
            run.graphId = record.getGraphId();
            appends.incrementAndGet();
            return null;
        });
    }

    private Run writable(Lease lease) {
        Run run = runs.get(lease.getRunId());
        if (run == null || run.epoch != lease.getEpoch() || !lease.getOwner().equals(run.owner)) {
            throw new FencedOutException(lease.getRunId(), lease.getEpoch(), run == null ? null : run.epoch,
                "lease " + lease + " no longer holds run " + lease.getRunId());
        }
        return run;
    }

    @Override
    public CompletionStage<Optional<CheckpointRecord>> latest(String runId) {
        return async(() -> Optional.ofNullable(runs.get(runId)).map(run -> run.checkpoints.lastEntry()).map(Map.Entry::getValue));
    }

    @Override
    public CompletionStage<Optional<CheckpointRecord>> get(String runId, long sequence) {
        return async(() -> Optional.ofNullable(runs.get(runId)).map(run -> run.checkpoints.get(sequence)));
    }

    @Override
    public CompletionStage<List<CheckpointRecord>> history(String runId) {
        return async(() -> runs.containsKey(runId) ? List.copyOf(runs.get(runId).checkpoints.values()) : List.of());
    }

    @Override
    public CompletionStage<List<RunInfo>> runs() {
        return async(() -> {
            List<RunInfo> infos = new ArrayList<>();
            runs.forEach((id, run) -> {
                Map.Entry<Long, CheckpointRecord> last = run.checkpoints.lastEntry();
                infos.add(new RunInfo(id, run.graphId, run.owner, run.leaseUntil, run.epoch,
                    last == null ? 0 : last.getKey(), last == null ? null : last.getValue().getStatus()));
            });
            return infos;
        });
    }

    @Override
    public CompletionStage<Integer> prune(String runId, int keepLatest) {
        if (keepLatest < 1) return CompletableFuture.failedFuture(new IllegalArgumentException("keepLatest must be at least 1"));
        return async(() -> {
            Run run = runs.get(runId);
            if (run == null) return 0;
            Set<Long> keep = new HashSet<>();
            for (CheckpointRecord kept : new ArrayList<>(run.checkpoints.descendingMap().values()).subList(0, Math.min(keepLatest, run.checkpoints.size()))) {
                CheckpointRecord current = kept;
                while (current != null && keep.add(current.getSequence()) && current.getKind() == CheckpointRecord.Kind.DELTA) {
                    current = run.checkpoints.get(current.getParentSequence());
                }
            }
            int before = run.checkpoints.size();
            run.checkpoints.keySet().retainAll(keep);
            return before - run.checkpoints.size();
        });
    }

    @Override
    public CompletionStage<Void> delete(String runId) {
        return async(() -> {
            runs.remove(runId);
            return null;
        });
    }

    @Override
    public void close() {
        closed = true;
        io.shutdown();
    }

    @Override
    public String toString() {
        return "MapCheckpointStore";
    }
}

package dev.trellis.springboot

import org.springframework.boot.context.properties.ConfigurationProperties
import java.time.Duration

/**
 * The `trellis.*` configuration properties of the starter (their metadata, for IDEs, is in
 * `META-INF/spring-configuration-metadata.json`).
 *
 * ```properties
 * trellis.store.type=auto
 * trellis.store.schema=trellis
 * trellis.drain.timeout=30s
 * ```
 */
@ConfigurationProperties("trellis")
public class TrellisProperties {
    /** Where runs keep their checkpoints. */
    public var store: Store = Store()

    /** The graceful drain of running runs when the application shuts down. */
    public var drain: Drain = Drain()

    /** Micrometer metrics of runs and nodes. */
    public var metrics: Metrics = Metrics()

    /** OpenTelemetry tracing of runs. */
    public var tracing: Tracing = Tracing()

    /** The checkpoint store's settings. */
    public class Store {
        /** Which store: from the application's `DataSource` (auto), PostgreSQL, SQLite, in memory, or none. */
        public var type: StoreType = StoreType.AUTO

        /** The PostgreSQL schema of the store's tables (lower-case letters, digits and underscores). */
        public var schema: String = "trellis"

        /** The SQLite database file; by default the file of the `DataSource`'s `jdbc:sqlite:` URL. */
        public var sqlitePath: String? = null

        /** How long a run's lease lasts before another worker may take the run over; runs renew it. */
        public var leaseDuration: Duration = Duration.ofSeconds(30)
    }

    /** The drain's settings. */
    public class Drain {
        /** Whether shutting the application down drains the runs (checkpoint and end them INTERRUPTED). */
        public var enabled: Boolean = true

        /** How long the shutdown waits for the drained runs to checkpoint and end. */
        public var timeout: Duration = Duration.ofSeconds(30)
    }

    /** The metrics' settings. */
    public class Metrics {
        /** Whether runs and node executions are measured in the application's `MeterRegistry`. */
        public var enabled: Boolean = true
    }

    /** The tracing's settings. */
    public class Tracing {
        /** Whether runs are traced through the application's `OpenTelemetry` (with trellis-opentelemetry). */
        public var enabled: Boolean = true
    }

    /** The kinds of checkpoint store. */
    public enum class StoreType {
        /** PostgreSQL or SQLite, after the application's `DataSource`; in memory when there is none. */
        AUTO,

        /** `PostgresCheckpointStore` on the application's `DataSource`. */
        POSTGRES,

        /** `SqliteCheckpointStore` on the file of the `DataSource` (or `trellis.store.sqlite-path`). */
        SQLITE,

        /** `InMemoryCheckpointStore`: runs resume only within this process. */
        MEMORY,

        /** No checkpoints: runs cannot be resumed. */
        NONE,
    }
}

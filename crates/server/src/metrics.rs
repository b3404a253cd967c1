//! The server's counters, as a Prometheus server scrapes them (`GET /metrics`, OpenMetrics
//! text): requests by operation and outcome, their durations, bytes in and out by operation,
//! and the requests in flight.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

/// One operation's label.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Operation {
    operation: String,
}

/// An operation and how it ended: `ok`, or its error's kind.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Outcome {
    operation: String,
    outcome: String,
}

type Durations = Family<Operation, Histogram, fn() -> Histogram>;

/// Every counter, and the registry that prints them.
pub struct Metrics {
    registry: Registry,
    requests: Family<Outcome, Counter>,
    seconds: Durations,
    received: Family<Operation, Counter>,
    sent: Family<Operation, Counter>,
    in_flight: Gauge,
}

fn durations() -> Histogram {
    // 50 µs to about 30 minutes.
    Histogram::new(exponential_buckets(0.00005, 2.0, 26))
}

impl Metrics {
    /// Counters at zero.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("fieldstore");
        let requests = Family::<Outcome, Counter>::default();
        let seconds = Durations::new_with_constructor(durations);
        let (received, sent) = (Family::<Operation, Counter>::default(), Family::<Operation, Counter>::default());
        let in_flight = Gauge::default();
        registry.register("requests", "Requests answered, by operation and outcome (ok or the error's kind)", requests.clone());
        registry.register(
            "request_duration_seconds",
            "Time to answer a request (a retrieve: until its bytes start to flow)",
            seconds.clone(),
        );
        registry.register("received_bytes", "Field bytes received (archive), by operation", received.clone());
        registry.register("sent_bytes", "Field and answer bytes sent, by operation", sent.clone());
        registry.register("requests_in_flight", "Requests being answered now", in_flight.clone());
        Metrics { registry, requests, seconds, received, sent, in_flight }
    }

    /// A request begins: counted in flight until its [`InFlight`] is dropped.
    pub fn begin(&self) -> InFlight {
        self.in_flight.inc();
        InFlight(self.in_flight.clone())
    }

    /// A request ended: its outcome, duration and bytes.
    pub fn record(&self, operation: &str, outcome: &str, took: Duration, received: u64, sent: u64) {
        let label = Operation { operation: operation.to_string() };
        self.requests.get_or_create(&Outcome { operation: operation.to_string(), outcome: outcome.to_string() }).inc();
        self.seconds.get_or_create(&label).observe(took.as_secs_f64());
        if received > 0 {
            self.received.get_or_create(&label).inc_by(received);
        }
        if sent > 0 {
            self.sent.get_or_create(&label).inc_by(sent);
        }
    }

    /// Bytes an answer streamed after its request was recorded (a listing's lines).
    pub fn streamed(&self, operation: &str, sent: u64) {
        self.sent.get_or_create(&Operation { operation: operation.to_string() }).inc_by(sent);
    }

    /// The OpenMetrics text of every counter.
    pub fn text(&self) -> String {
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

/// A request in flight; dropping it ends it.
pub struct InFlight(Gauge);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}

// The dashboard: /metrics scraped every second while it is shown, the
// figures a person watches (throughput, queue, KV cache, prefix hits,
// latency percentiles, preemptions) as numbers and as charts of the last
// two minutes.
"use strict";

const Dashboard = (() => {
  const kPoints = 120;  // seconds of history in the charts
  const snapshots = [];  // {time (s), samples}, oldest first, kPoints + 60 at most
  const charts = {};
  let timer = null;

  const $ = (id) => document.getElementById(id);
  const name = (metric) => "ladder:" + metric;

  function lineChart(canvasId, series, yMax) {
    return new Chart($(canvasId), {
      type: "line",
      data: {
        labels: [],
        datasets: series.map(([label, color, axis]) => ({
          label, data: [], borderColor: color, backgroundColor: color, yAxisID: axis || "y",
          borderWidth: 2, pointRadius: 0, tension: 0.2, spanGaps: true,
        })),
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        interaction: { mode: "index", intersect: false },
        scales: {
          x: { ticks: { maxTicksLimit: 7 } },
          y: { beginAtZero: true, suggestedMax: yMax },
          // A second scale, on the right, for series far smaller than the rest.
          ...(series.some(([, , axis]) => axis === "right")
            ? { right: { position: "right", beginAtZero: true, grid: { drawOnChartArea: false } } }
            : {}),
        },
        plugins: { legend: { position: "bottom", labels: { boxWidth: 12 } } },
      },
    });
  }

  function makeCharts() {
    charts.throughput = lineChart("chart-throughput", [["prompt", "#2f5d8a"], ["generated", "#d1603d"]]);
    charts.requests = lineChart("chart-requests", [["running", "#2a9d8f"], ["waiting", "#e9c46a"]], 1);
    charts.cache = lineChart("chart-cache", [["KV cache used", "#6a4c93"], ["prefix hits", "#2a9d8f"]], 100);
    charts.latency = lineChart("chart-latency", [
      ["TTFT p50", "#2f5d8a"], ["TTFT p99", "#8ab6e0"],
      ["TPOT p50 (right)", "#d1603d", "right"], ["TPOT p99 (right)", "#f0a58f", "right"],
    ]);
  }

  // The snapshot closest to `seconds` before the newest (the oldest if the
  // history is shorter).
  function ago(seconds) {
    const newest = snapshots[snapshots.length - 1];
    for (let i = snapshots.length - 2; i >= 0; --i) {
      if (newest.time - snapshots[i].time >= seconds - 0.25) return snapshots[i];
    }
    return snapshots[0];
  }

  function figures() {
    const now = snapshots[snapshots.length - 1];
    const total = (snapshot, metric) => Metrics.total(snapshot.samples, name(metric));
    const rateOver = (metric, seconds) => {
      const then = ago(seconds);
      return Metrics.rate(total(now, metric), total(then, metric), now.time - then.time);
    };
    const recent = ago(10);
    const queries = total(now, "prefix_cache_queries_total") - total(recent, "prefix_cache_queries_total");
    const hits = total(now, "prefix_cache_hits_total") - total(recent, "prefix_cache_hits_total");
    const window = ago(60);
    const percentile = (metric, q) => {
      const value = Metrics.quantile(q, Metrics.buckets(now.samples, name(metric)),
        now === window ? null : Metrics.buckets(window.samples, name(metric)));
      return value === null ? null : value * 1000;
    };
    return {
      tokensIn: rateOver("prompt_tokens_total", 5),
      tokensOut: rateOver("generation_tokens_total", 5),
      running: total(now, "num_requests_running"),
      waiting: total(now, "num_requests_waiting"),
      kvUsed: 100 * total(now, "kv_cache_usage_perc"),
      prefixHits: queries > 0 ? (100 * hits) / queries : null,
      ttft50: percentile("time_to_first_token_seconds", 0.5),
      ttft99: percentile("time_to_first_token_seconds", 0.99),
      tpot50: percentile("time_per_output_token_seconds", 0.5),
      tpot99: percentile("time_per_output_token_seconds", 0.99),
      preemptions: total(now, "num_preemptions_total"),
      preemptionRate: rateOver("num_preemptions_total", 60) * 60,
    };
  }

  const fixed = (value, digits) => (value === null ? "–" : value.toFixed(digits));
  const ms = (value) => (value === null ? "–" : value < 10 ? value.toFixed(1) : Math.round(value).toString());

  function show(f) {
    $("m-tokens-in").textContent = fixed(f.tokensIn, 1);
    $("m-tokens-out").textContent = fixed(f.tokensOut, 1);
    $("m-running").textContent = String(f.running);
    $("m-waiting").textContent = String(f.waiting);
    $("m-kv").textContent = fixed(f.kvUsed, 1) + " %";
    $("m-prefix").textContent = f.prefixHits === null ? "–" : fixed(f.prefixHits, 1) + " %";
    $("m-ttft").textContent = `${ms(f.ttft50)} / ${ms(f.ttft99)}`;
    $("m-tpot").textContent = `${ms(f.tpot50)} / ${ms(f.tpot99)}`;
    $("m-preemptions").textContent = `${f.preemptions} (${fixed(f.preemptionRate, 0)}/min)`;

    const label = new Date().toLocaleTimeString([], { hour12: false });
    const rows = {
      throughput: [f.tokensIn, f.tokensOut],
      requests: [f.running, f.waiting],
      cache: [f.kvUsed, f.prefixHits],
      latency: [f.ttft50, f.ttft99, f.tpot50, f.tpot99],
    };
    for (const [key, values] of Object.entries(rows)) {
      const chart = charts[key];
      chart.data.labels.push(label);
      values.forEach((value, i) => chart.data.datasets[i].data.push(value));
      if (chart.data.labels.length > kPoints) {
        chart.data.labels.shift();
        chart.data.datasets.forEach((dataset) => dataset.data.shift());
      }
      chart.update("none");
    }
  }

  async function scrape() {
    try {
      const text = await Api.getText("/metrics");
      snapshots.push({ time: performance.now() / 1000, samples: Metrics.parse(text) });
      if (snapshots.length > kPoints + 60) snapshots.shift();
      $("dashboard-error").hidden = true;
      show(figures());
    } catch (error) {
      $("dashboard-error").textContent = "cannot read /metrics: " + error.message;
      $("dashboard-error").hidden = false;
    }
  }

  return {
    start() {
      if (timer !== null) return;
      if (!charts.throughput) makeCharts();
      scrape();
      timer = setInterval(scrape, 1000);
    },
    stop() {
      clearInterval(timer);
      timer = null;
    },
  };
})();

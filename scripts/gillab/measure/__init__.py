"""Measuring: the interpreters (built from pinned sources, discovered, described), one sample run
in a fresh process under a build (runner, servers), the sweeps that interleave them and store every
sample with its run's metadata (sweep, store, campaigns), what each experiment measures
(:mod:`gillab.measure.experiments`, the workloads in ``workloads/``; the protocol every one follows:
protocol), GIL traces (what a trace file holds: trace_file; recording them: trace_record), and
campaigns that travel between machines.  Nothing here judges or draws: measuring needs neither the claims nor
the notebook stack."""

// Case builders shared by the pool workloads (A1–A3): one case per pool
// configuration, with the id the tables and targets look rows up by
// (`prefork-fcfs-2`, `piscina--2`, `workerpool--2`, …).

const labels = { piscina: 'piscina (threads)', workerpool: 'workerpool (process)' };

export function poolCase(file, impl, strategy, processes, params) {
  return {
    id: `${impl}-${strategy ?? ''}-${processes}`,
    impl,
    strategy,
    processes,
    peer: impl !== 'prefork',
    label: `${impl === 'prefork' ? `prefork ${strategy}` : labels[impl]}, ${processes}p`,
    file,
    params: { impl, strategy, processes, ...params },
  };
}

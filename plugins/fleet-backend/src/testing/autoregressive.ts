/**
 * Seeded first-order autoregressive series, as Prometheus range answers look like (a point
 * shares part of its window with the next): the same series on every run of a seed. mulberry32
 * for the uniforms, Box-Muller for the normals. Each call of the function returned draws `n`
 * points of noise of one standard deviation with lag-one correlation `rho`, moved by `shift`
 * standard deviations.
 */
export function autoregressiveSeries(seed: number) {
  let a = seed;
  const uniform = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const normal = () =>
    Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
  return (n: number, rho: number, shift = 0): number[] => {
    const out: number[] = [];
    let x = normal();
    for (let i = 0; i < n; i++) {
      x = rho * x + Math.sqrt(1 - rho * rho) * normal();
      out.push(x + shift);
    }
    return out;
  };
}

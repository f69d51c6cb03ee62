/**
 * Service IP and NodePort allocation, per cluster: ClusterIPs come from
 * 10.96.0.0/16 (10.96.0.1 is the `kubernetes` Service), NodePorts from
 * 30000-32767, both picked at random and unique, like the real allocators.
 */

export class Allocator<T> {
  private readonly used = new Set<T>();

  constructor(
    private readonly pick: () => T,
    private readonly inRange: (value: T) => boolean,
  ) {}

  isAllocated(value: T): boolean {
    return this.used.has(value);
  }

  contains(value: T): boolean {
    return this.inRange(value);
  }

  /** A free value, not yet reserved. */
  next(): T {
    for (let i = 0; i < 100000; i++) {
      const candidate = this.pick();
      if (!this.used.has(candidate)) return candidate;
    }
    throw new Error('range is full');
  }

  reserve(value: T): void {
    this.used.add(value);
  }

  release(value: T): void {
    this.used.delete(value);
  }
}

function randomInt(min: number, max: number): number {
  return min + Math.floor(Math.random() * (max - min + 1));
}

export function clusterIpAllocator(): Allocator<string> {
  return new Allocator(
    () => {
      const n = randomInt(2, 65534); // skip .0.0, .0.1 (kubernetes) and .255.255
      return `10.96.${n >> 8}.${n & 255}`;
    },
    ip =>
      /^10\.96\.(\d{1,3})\.(\d{1,3})$/.test(ip) &&
      ip
        .split('.')
        .slice(2)
        .every(o => Number(o) <= 255),
  );
}

export function nodePortAllocator(): Allocator<number> {
  return new Allocator(
    () => randomInt(30000, 32767),
    port => Number.isInteger(port) && port >= 30000 && port <= 32767,
  );
}

import { shardOf } from '../sharding/shardOf';

/** The shards the sharded tests split their fleet into. */
export const SHARDS = 4;

/**
 * The sharded tests' clusters. With 4 shards (FNV-1a of the name): echo, india, kilo in 0;
 * charlie, delta in 1; juliet in 2; alpha, bravo in 3.
 */
export const SHARDED_CLUSTERS = [
  'alpha',
  'bravo',
  'charlie',
  'delta',
  'echo',
  'india',
  'juliet',
  'kilo',
];

/** The clusters of these shards, sorted. */
export const inShards = (shards: number[]) =>
  SHARDED_CLUSTERS.filter(name =>
    shards.includes(shardOf(name, SHARDS)),
  ).sort();

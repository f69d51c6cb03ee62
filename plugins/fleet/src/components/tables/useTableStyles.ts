import { makeStyles } from '@material-ui/core/styles';

/**
 * Fleet's tables never break a word mid-way (`sim-` / `2`, `CLUSTER_OFFLIN` / `E`,
 * `user:default/g` / `uest`): cells wrap between words only, names, codes and images stay whole,
 * and a table wider than its card scrolls inside it.
 */
export const useTableStyles = makeStyles({
  scroll: { overflowX: 'auto' },
  table: {
    '& td, & th': { wordBreak: 'normal', overflowWrap: 'normal' },
    '& th': { whiteSpace: 'nowrap' },
  },
  nowrap: { whiteSpace: 'nowrap' },
});

import { reasonParts, reasonWords } from '@cnp/plugin-fleet-common';
import Typography from '@material-ui/core/Typography';

/** Fleet's one map of codes to words, shared with the backend's notifications. */
export { reasonParts, reasonWords };

/**
 * A deployment's status reason for people, as text: its words, then the code.
 *
 * @public
 */
export function deploymentReasonText(reason: string): string {
  const { words, code, detail } = reasonParts(reason);
  return [code ? `${words} (${code})` : words, detail]
    .filter(Boolean)
    .join(': ');
}

/**
 * A code (a reason, a status, a state) in words, the code itself on hover (for searching logs
 * and the API): `Rolling back` for `ROLLING_BACK`.
 *
 * @public
 */
export function CodeWords(props: { code: string }) {
  const { words, code } = reasonParts(props.code);
  return (
    <span title={code} data-code={code}>
      {words}
    </span>
  );
}

/**
 * A reason as words, then its details; the code on hover over the words.
 *
 * @public
 */
export function ReasonText(props: {
  reason: string;
  variant?: 'caption' | 'body2';
  display?: 'block' | 'inline';
}) {
  const { words, code, detail } = reasonParts(props.reason);
  return (
    <Typography
      variant={props.variant ?? 'caption'}
      display={props.display ?? 'block'}
      component="span"
    >
      <span title={code} data-code={code}>
        {words}
      </span>
      {detail && <>: {detail}</>}
    </Typography>
  );
}

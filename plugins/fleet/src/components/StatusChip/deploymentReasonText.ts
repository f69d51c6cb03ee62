import { DeploymentReasons } from '@cnp/plugin-fleet-common';

const readable: Record<string, string> = {
  [DeploymentReasons.ROLLED_BACK]:
    'Rolled back: a newer revision failed, so the last DEPLOYED one runs again',
};

/**
 * A deployment's status reason for people: a sentence where the code alone says too little,
 * otherwise the code itself.
 *
 * @public
 */
export function deploymentReasonText(reason: string): string {
  return readable[reason] ?? reason;
}

import { parseEntityRef } from '@backstage/catalog-model';
import { useApi } from '@backstage/core-plugin-api';
import { usePermission } from '@backstage/plugin-permission-react';
import {
  fleetReleaseManagePermission,
  type Application,
  type Cluster,
  type Release,
} from '@cnp/plugin-fleet-common';
import FormControl from '@material-ui/core/FormControl';
import FormControlLabel from '@material-ui/core/FormControlLabel';
import FormHelperText from '@material-ui/core/FormHelperText';
import FormLabel from '@material-ui/core/FormLabel';
import Radio from '@material-ui/core/Radio';
import RadioGroup from '@material-ui/core/RadioGroup';
import Tooltip from '@material-ui/core/Tooltip';
import Alert from '@material-ui/lab/Alert';
import { useEffect, useState } from 'react';
import { apiErrorMessage, fleetApiRef } from '../../api';
import { ClusterChoice } from '../ClusterChoice';

/**
 * Where the dialog deploys: one cluster (a deployment), or a fleet release to every cluster the
 * application is placed on or to the clusters picked.
 */
export type DeployTarget = 'cluster' | 'placed' | 'several';

/** The component's Fleet application, looked up while the dialog is open. */
export interface ApplicationLookup {
  loading: boolean;
  application?: Application;
  error?: string;
}

/** The application of `entityRef` (one not being removed), fetched each time `active` turns on. */
export function useApplicationOf(
  entityRef: string,
  active: boolean,
): ApplicationLookup {
  const api = useApi(fleetApiRef);
  const [state, setState] = useState<ApplicationLookup>({ loading: true });
  useEffect(() => {
    if (!active) return undefined;
    let cancelled = false;
    setState({ loading: true });
    api.listApplications({ entityRef }).then(
      applications => {
        if (!cancelled)
          setState({
            loading: false,
            application: applications.find(a => !a.removing),
          });
      },
      error => {
        if (!cancelled)
          setState({ loading: false, error: apiErrorMessage(error) });
      },
    );
    return () => {
      cancelled = true;
    };
  }, [api, entityRef, active]);
  return state;
}

function unavailableText(
  entityRef: string,
  lookup: ApplicationLookup,
): string | undefined {
  if (lookup.loading) return 'Looking up the application…';
  if (lookup.error) return `Could not look up the application: ${lookup.error}`;
  if (!lookup.application)
    return `${entityRef} has no Fleet application yet: deploy it to one cluster first, then release it to several`;
  return undefined;
}

/**
 * The choice between one cluster and a release (to every placed cluster, or to the clusters
 * picked). The release choices are disabled, with the reason, while the user may not release the
 * component (`fleet.release.manage` on it) or it has no application yet.
 */
export function ReleaseOptions(props: {
  entityRef: string;
  lookup: ApplicationLookup;
  clusters: Cluster[];
  target: DeployTarget;
  onTargetChange: (target: DeployTarget) => void;
  chosen: string[];
  onChosenChange: (chosen: string[]) => void;
}) {
  const { entityRef, lookup, target, chosen, onChosenChange } = props;
  const permission = usePermission({
    permission: fleetReleaseManagePermission,
    resourceRef: entityRef,
  });
  const denied = !permission.loading && !permission.allowed;
  const unavailable = unavailableText(entityRef, lookup);
  const disabled = permission.loading || denied || unavailable !== undefined;

  const releaseChoice = (value: DeployTarget, label: string) => {
    const choice = (
      <FormControlLabel
        value={value}
        control={<Radio />}
        label={label}
        disabled={disabled}
      />
    );
    if (!denied) return choice;
    const name = parseEntityRef(entityRef).name;
    return (
      <Tooltip title={`You are not allowed to release ${name}`}>
        {choice}
      </Tooltip>
    );
  };

  return (
    <FormControl component="fieldset" margin="normal" fullWidth>
      <FormLabel component="legend">Deploy to</FormLabel>
      <RadioGroup
        aria-label="Deploy to"
        value={target}
        onChange={e => props.onTargetChange(e.target.value as DeployTarget)}
      >
        <FormControlLabel
          value="cluster"
          control={<Radio />}
          label="One cluster"
        />
        {releaseChoice(
          'placed',
          'Every cluster the application is placed on (release)',
        )}
        {releaseChoice('several', 'Several clusters (release)')}
      </RadioGroup>
      {!denied && unavailable && <FormHelperText>{unavailable}</FormHelperText>}
      {target === 'several' && (
        <ClusterChoice
          clusters={props.clusters}
          chosen={chosen}
          onChange={onChosenChange}
        />
      )}
      {target === 'several' && chosen.length === 0 && (
        <FormHelperText>
          Pick the clusters to release to: Release is enabled once one is picked
        </FormHelperText>
      )}
    </FormControl>
  );
}

/** What a release did: the clusters it released to, and those it skipped with their reasons. */
export function ReleaseResult(props: { release: Release }) {
  const { targets, skipped } = props.release;
  return (
    <Alert
      severity={skipped.length > 0 ? 'warning' : 'success'}
      role="status"
      aria-label="Release result"
      style={{ marginBottom: 16 }}
    >
      {targets.length > 0
        ? `Released to ${targets.map(t => t.cluster).join(', ')}.`
        : 'Released to no cluster.'}
      {skipped.length > 0 && (
        <>
          {' Skipped:'}
          <ul aria-label="Skipped clusters" style={{ margin: 0 }}>
            {skipped.map(s => (
              <li key={s.cluster}>
                {s.cluster}: {s.reason}
              </li>
            ))}
          </ul>
        </>
      )}
    </Alert>
  );
}

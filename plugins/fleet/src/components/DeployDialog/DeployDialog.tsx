import { useApi } from '@backstage/core-plugin-api';
import type { Cluster, Deployment, Release } from '@cnp/plugin-fleet-common';
import Button from '@material-ui/core/Button';
import Dialog from '@material-ui/core/Dialog';
import DialogActions from '@material-ui/core/DialogActions';
import DialogContent from '@material-ui/core/DialogContent';
import DialogTitle from '@material-ui/core/DialogTitle';
import ListItemText from '@material-ui/core/ListItemText';
import MenuItem from '@material-ui/core/MenuItem';
import TextField from '@material-ui/core/TextField';
import Alert from '@material-ui/lab/Alert';
import { FormEvent, useEffect, useMemo, useState } from 'react';
import { fleetApiRef } from '../../api';
import { useSubmission } from '../../hooks/useSubmission';
import { ImageField, isImageInvalid } from '../ImageField';
import { DialogButtons } from '../ConfirmDialog';
import {
  ReleaseOptions,
  ReleaseResult,
  useApplicationOf,
  type DeployTarget,
} from './ReleaseOptions';

export interface DeployDialogProps {
  open: boolean;
  entityRef: string;
  clusters: Cluster[];
  /** Clusters the component names (cnp.io/clusters): offered first. */
  preferredClusters?: string[];
  /** From the entity's cnp.io/image annotation. */
  defaultImage?: string;
  onClose: () => void;
  onDeployed: (deployment: Deployment) => void;
  /**
   * With it, the dialog also offers a fleet release (to every placed cluster or to several), for
   * users allowed `fleet.release.manage` on the component; it stays open to show the result.
   */
  onReleased?: (release: Release) => void;
}

function firstDeployable(clusters: Cluster[], preferred: string[]): string {
  const ok = (c: Cluster) => c.status !== 'OFFLINE';
  return (
    clusters.find(c => preferred.includes(c.name) && ok(c))?.name ??
    clusters.find(ok)?.name ??
    ''
  );
}

function clusterHelperText(
  clusters: Cluster[],
  selected: Cluster | undefined,
): string {
  if (clusters.length === 0) return 'No clusters are registered yet';
  if (!selected) return 'Pick a cluster';
  return `${selected.status}${
    selected.statusReason ? ` — ${selected.statusReason}` : ''
  }`;
}

function imageHelperText(
  image: string,
  imageInvalid: boolean,
  defaultImage: string | undefined,
): string {
  if (imageInvalid)
    return 'An image reference without spaces, e.g. ghcr.io/acme/payments:1.4.2';
  if (defaultImage && image === defaultImage)
    return 'From the cnp.io/image annotation';
  return ' ';
}

/**
 * Deploys the component to the cluster the user picks, or (with `onReleased`) releases it to
 * several clusters at once. OFFLINE clusters are in the list but disabled, with the reason; errors
 * are shown in the words the API used.
 */
export function DeployDialog(props: DeployDialogProps) {
  const { open, entityRef, clusters, onClose, onDeployed, onReleased } = props;
  const api = useApi(fleetApiRef);
  const preferred = useMemo(
    () => props.preferredClusters ?? [],
    [props.preferredClusters],
  );
  const ordered = useMemo(
    () =>
      [...clusters].sort(
        (a, b) =>
          Number(preferred.includes(b.name)) -
            Number(preferred.includes(a.name)) || a.name.localeCompare(b.name),
      ),
    [clusters, preferred],
  );
  const [cluster, setCluster] = useState('');
  const [image, setImage] = useState(props.defaultImage ?? '');
  const [replicas, setReplicas] = useState('');
  const { submitting, error, setError, run } = useSubmission();
  const [target, setTarget] = useState<DeployTarget>('cluster');
  const [chosen, setChosen] = useState<string[]>([]);
  const [released, setReleased] = useState<Release>();
  const lookup = useApplicationOf(entityRef, open && onReleased !== undefined);

  useEffect(() => {
    if (open) {
      setCluster(firstDeployable(ordered, preferred));
      setImage(props.defaultImage ?? '');
      setReplicas('');
      setError(undefined);
      setTarget('cluster');
      setChosen([]);
      setReleased(undefined);
    }
    // Reset only when the dialog opens, not on every poll of the cluster list.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [open]);

  const selected = clusters.find(c => c.name === cluster);
  const replicasValue = replicas.trim() === '' ? undefined : Number(replicas);
  const replicasInvalid =
    replicasValue !== undefined &&
    (!Number.isInteger(replicasValue) ||
      replicasValue < 0 ||
      replicasValue > 1000);
  const imageInvalid = isImageInvalid(image);
  const releasing = target !== 'cluster';
  const clusterInvalid = releasing
    ? !lookup.application || (target === 'several' && chosen.length === 0)
    : !selected || selected.status === 'OFFLINE';

  const release = async (applicationId: string) => {
    const result = await api.createRelease(applicationId, {
      image: image.trim(),
      ...(replicasValue !== undefined && { replicas: replicasValue }),
      ...(target === 'several' && { clusters: chosen }),
    });
    setReleased(result);
    onReleased?.(result);
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (replicasInvalid || imageInvalid || clusterInvalid) return;
    await run(async () => {
      if (releasing && lookup.application) {
        await release(lookup.application.id);
        return;
      }
      const deployment = await api.createDeployment({
        entityRef,
        cluster,
        image: image.trim(),
        replicas: replicasValue,
      });
      onDeployed(deployment);
      onClose();
    });
  };

  return (
    <Dialog
      open={open}
      onClose={() => {
        if (!submitting) onClose(); // keep the dialog, and the API's answer, while a deploy runs
      }}
      fullWidth
      maxWidth="sm"
      aria-labelledby="fleet-deploy-title"
    >
      <form onSubmit={submit} noValidate>
        <DialogTitle id="fleet-deploy-title">Deploy {entityRef}</DialogTitle>
        <DialogContent>
          {released && <ReleaseResult release={released} />}
          {error && (
            <Alert severity="error" role="alert" style={{ marginBottom: 16 }}>
              {error}
            </Alert>
          )}
          {onReleased && (
            <ReleaseOptions
              entityRef={entityRef}
              lookup={lookup}
              clusters={ordered}
              target={target}
              onTargetChange={setTarget}
              chosen={chosen}
              onChosenChange={setChosen}
            />
          )}
          {!releasing && (
            <TextField
              select
              fullWidth
              margin="normal"
              label="Cluster"
              value={cluster}
              onChange={e => setCluster(e.target.value as string)}
              SelectProps={{ MenuProps: { disablePortal: false } }}
              inputProps={{ 'aria-label': 'Cluster' }}
              helperText={clusterHelperText(clusters, selected)}
            >
              {ordered.map(c => (
                <MenuItem
                  key={c.name}
                  value={c.name}
                  disabled={c.status === 'OFFLINE'}
                  data-cluster={c.name}
                >
                  <ListItemText
                    primary={`${c.name} — ${c.status}`}
                    secondary={
                      c.status === 'OFFLINE'
                        ? `Unavailable: ${
                            c.statusReason ?? 'cluster is OFFLINE'
                          }`
                        : c.endpoint
                    }
                  />
                </MenuItem>
              ))}
            </TextField>
          )}
          <ImageField
            value={image}
            onChange={setImage}
            helperText={imageHelperText(
              image,
              imageInvalid,
              props.defaultImage,
            )}
          />
          <TextField
            fullWidth
            margin="normal"
            label="Replicas"
            type="number"
            value={replicas}
            onChange={e => setReplicas(e.target.value)}
            error={replicasInvalid}
            helperText={
              replicasInvalid
                ? 'A whole number from 0 to 1000'
                : "Leave empty to keep the application's replicas (new applications get the configured default)"
            }
            inputProps={{ min: 0, max: 1000, 'aria-label': 'Replicas' }}
          />
        </DialogContent>
        {released ? (
          <DialogActions>
            <Button onClick={onClose}>Close</Button>
          </DialogActions>
        ) : (
          <DialogButtons
            submitting={submitting}
            onCancel={onClose}
            confirmLabel={releasing ? 'Release' : 'Deploy'}
            confirmDisabled={replicasInvalid || imageInvalid || clusterInvalid}
          />
        )}
      </form>
    </Dialog>
  );
}

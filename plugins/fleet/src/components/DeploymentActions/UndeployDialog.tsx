import { useApi } from '@backstage/core-plugin-api';
import type { Deployment } from '@cnp/plugin-fleet-common';
import Typography from '@material-ui/core/Typography';
import { fleetApiRef } from '../../api';
import { ConfirmDialog } from '../ConfirmDialog';

/** Asks before removing a component from one cluster, naming both. */
export function UndeployDialog(props: {
  deployment: Deployment;
  componentName: string;
  onClose: () => void;
  onDone: () => void;
}) {
  const { deployment, componentName, onDone } = props;
  const api = useApi(fleetApiRef);
  return (
    <ConfirmDialog
      title={`Undeploy ${componentName} from ${deployment.cluster}?`}
      confirmLabel="Undeploy"
      onConfirm={async () => {
        await api.undeploy(deployment.id);
        onDone();
      }}
      onClose={props.onClose}
    >
      <Typography variant="body2">
        Fleet removes the objects it applied for {componentName} from{' '}
        {deployment.cluster}. The deployment shows REMOVING until they are gone,
        then leaves the list. Other clusters are not touched.
      </Typography>
    </ConfirmDialog>
  );
}

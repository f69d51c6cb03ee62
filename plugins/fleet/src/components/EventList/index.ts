export { EventList } from './EventList';

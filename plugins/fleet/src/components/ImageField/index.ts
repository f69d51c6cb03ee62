export { ImageField, isImageInvalid } from './ImageField';

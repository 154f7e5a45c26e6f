# Fixed version of positive/yolov5_split/train.py.
# Source: seeds/yolov5_loss_inplace.txt (a Stack Exchange question by Hanif Al-Farisi,
#   as quoted), in a YOLOv5 project's layout.
# Fix: one line added in utils/loss.py, YOLO_LOSS.compute_loss, between the objectness
#   loss and the second write into the prediction tensor: `preds = preds.clone()`.
#   BCEWithLogitsLoss keeps its saved view of the old tensor, whose version no longer
#   changes; the wh write goes into the copy, and the forward values are the same. The
#   first write (xy) needs no change: nothing had saved the tensor before it. The other
#   files are unchanged.
import torch
from torch.optim import AdamW

from models.yolo import Yolov5
from utils.loss import YOLO_LOSS


def random_batches(n_batches, batch_size=2, num_classes=2, size=640):
    """Stands in for get_loaders(): random images, one to three random boxes each."""
    g = torch.Generator().manual_seed(0)
    for _ in range(n_batches):
        imgs = torch.rand(batch_size, 3, size, size, generator=g)
        targets = []
        for _ in range(batch_size):
            n = int(torch.randint(1, 4, (1,), generator=g))
            cls = torch.randint(0, num_classes, (n, 1), generator=g).float()
            xy = torch.rand(n, 2, generator=g) * 0.8 + 0.1
            wh = torch.rand(n, 2, generator=g) * 0.3 + 0.05
            targets.append(torch.cat([cls, xy, wh], dim=1))
        yield imgs, targets


def main():
    torch.manual_seed(0)
    # Initialize model, loss, and optimizer
    model = Yolov5(version="n", nc=2)
    print(f"{sum(p.numel() for p in model.parameters())/1e6} million parameters")
    criterion = YOLO_LOSS(model, rect_training=True)
    optimizer = AdamW(model.parameters(), lr=0.5)

    num_epochs = 1
    train_loader = list(random_batches(1, batch_size=2, num_classes=2))

    for epoch in range(num_epochs):
        model.train()
        epoch_loss = 0

        for imgs, targets in train_loader:
            torch.autograd.set_detect_anomaly(True)
            # Forward pass
            outputs = model(imgs)
            loss = criterion(outputs, targets, pred_size=imgs.shape[2:4])

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            epoch_loss += loss.item()

        print(f"Epoch {epoch+1}/{num_epochs} | Loss: {epoch_loss/len(train_loader)}")


if __name__ == "__main__":
    main()

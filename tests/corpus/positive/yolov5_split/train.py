# Source: seeds/yolov5_loss_inplace.txt (a Stack Exchange question by Hanif Al-Farisi,
#   as quoted), rebuilt in a YOLOv5 project's layout: models/common.py (Conv),
#   models/yolo.py (Detect and the Yolov5 model), utils/loss.py (YOLO_LOSS), train.py.
# Report: loss.backward() in the training loop fails with "one of the variables needed
#   for gradient computation has been modified by an inplace operation: [2, 3, 20, 20] is
#   at version 2; expected version 1"; the answers list the usual suspects without
#   finding it.
# In-place op: utils/loss.py line 53 (the wh decode, written into a slice of the
#   prediction tensor).
# Saved by: utils/loss.py line 52 (BCEWithLogitsLoss keeps preds[..., 4], a view of the
#   same tensor, for its backward; every view shares the version counter, so the write
#   raises although its elements do not overlap the objectness column). The first write
#   (xy, the line before) is harmless: nothing has saved the tensor yet.
# Fix: fixed/yolov5_split: utils/loss.py writes wh into a copy (`preds = preds.clone()`
#   after the objectness loss); the forward values are the same.
# Shrunk: a tiny Yolov5-like model, random images and boxes instead of get_loaders(),
#   bs=2, 640x640 inputs (so the stride-32 grid is 20x20, as in the report), one epoch of
#   one batch.
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
